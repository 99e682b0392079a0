"""A missing extra's package: one error naming the extra on import, one line from ``python -m``.

The subprocess tests make a package unimportable with a ``sitecustomize``
that puts ``None`` in ``sys.modules`` for it (``import onnx`` then raises
``ModuleNotFoundError``), as if it were not installed.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from ferrum.data.dataset.vision import ImageFolderDataset
from ferrum.distributed import Communicator
from ferrum.extras import MissingExtraError, require
from ferrum.store import SafetensorsStore
from ferrum.train.metric import CpuMemory, CpuUse
from ferrum.train.plot import write_plots

BLOCKER = """\
import os
import sys

for name in filter(None, os.environ.get("FERRUM_TEST_BLOCK", "").split(",")):
    sys.modules[name] = None  # `import name` raises ModuleNotFoundError, as if not installed
"""


def run(tmp_path: Path, blocked: str, *args: str) -> subprocess.CompletedProcess[str]:
    site = tmp_path / "site"
    site.mkdir(exist_ok=True)
    (site / "sitecustomize.py").write_text(BLOCKER)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(site), env.get("PYTHONPATH")]))
    env["FERRUM_TEST_BLOCK"] = blocked
    return subprocess.run(
        [sys.executable, *args], capture_output=True, text=True, env=env, timeout=120, cwd=tmp_path
    )


def one_line(stderr: str) -> str:
    lines = stderr.splitlines()
    assert len(lines) == 1, stderr
    assert "Traceback" not in stderr
    return lines[0]


def test_python_m_ferrum_onnx_without_onnx_is_one_line(tmp_path: Path) -> None:
    for args in (["--help"], ["model.onnx", "out"]):
        done = run(tmp_path, "onnx", "-m", "ferrum.onnx", *args)
        assert done.returncode == 1
        assert one_line(done.stderr) == "error: ferrum.onnx needs onnx: pip install 'ferrum-dl[onnx]'"
        assert done.stdout == ""


def test_python_m_ferrum_onnx_with_onnx_still_runs(tmp_path: Path) -> None:
    done = run(tmp_path, "", "-m", "ferrum.onnx", "--help")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: python -m ferrum.onnx")


def test_python_m_ferrum_train_plot_without_matplotlib_is_one_line(tmp_path: Path) -> None:
    logs = tmp_path / "run" / "train" / "epoch-1"
    logs.mkdir(parents=True)
    (logs / "Loss.log").write_text("0.5,16\n")
    done = run(tmp_path, "matplotlib", "-m", "ferrum.train.plot", str(tmp_path / "run"))
    assert done.returncode == 1
    expected = "error: plotting the metrics needs matplotlib: pip install 'ferrum-dl[plot]'"
    assert one_line(done.stderr) == expected
    assert not (tmp_path / "run" / "plots").exists()


def test_importing_ferrum_onnx_without_onnx_raises_an_error_naming_the_extra(tmp_path: Path) -> None:
    code = """\
try:
    import ferrum.onnx
except ModuleNotFoundError as err:
    print(type(err).__qualname__, err.name, err.extra)
    print(err)
"""
    done = run(tmp_path, "onnx", "-c", code)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "MissingExtraError onnx onnx",
        "ferrum.onnx needs onnx: pip install 'ferrum-dl[onnx]'",
    ]


def test_importing_ferrum_onnx_in_a_script_keeps_the_traceback(tmp_path: Path) -> None:
    # Only `python -m` prints one line; a program of the user's shows where it imported ferrum.onnx.
    done = run(tmp_path, "onnx", "-c", "import ferrum.onnx")
    assert done.returncode == 1
    assert "Traceback" in done.stderr
    assert done.stderr.splitlines()[-1] == (
        "ferrum.extras.MissingExtraError: ferrum.onnx needs onnx: pip install 'ferrum-dl[onnx]'"
    )


def _safetensors(tmp_path: Path) -> object:
    return SafetensorsStore.from_file(tmp_path / "m.safetensors").keys()


def _images(tmp_path: Path) -> object:
    (tmp_path / "cat").mkdir()
    (tmp_path / "cat" / "a.png").write_bytes(b"not decoded: Pillow is missing first")
    return ImageFolderDataset.new_classification(tmp_path)


def _plots(tmp_path: Path) -> object:
    (tmp_path / "train" / "epoch-1").mkdir(parents=True)
    (tmp_path / "train" / "epoch-1" / "Loss.log").write_text("0.5,16\n")
    return write_plots(tmp_path)


@pytest.mark.parametrize(
    ("blocked", "use", "message"),
    [
        (("safetensors", "safetensors.numpy"), _safetensors, "SafetensorsStore needs safetensors: "
         "pip install 'ferrum-dl[safetensors]'"),
        (("PIL", "PIL.Image"), _images, "ImageFolderDataset (decoding images with Pillow) needs PIL: "
         "pip install 'ferrum-dl[vision]'"),
        (("psutil",), lambda _: CpuUse(), "the CPU Usage metric needs psutil: "
         "pip install 'ferrum-dl[sys-metrics]' (or pip install psutil)"),
        (("psutil",), lambda _: CpuMemory(), "the CPU Memory metric needs psutil: "
         "pip install 'ferrum-dl[sys-metrics]' (or pip install psutil)"),
        (("mpi4py", "mpi4py.MPI"), lambda _: Communicator(), "ferrum.distributed (MPI) needs mpi4py: "
         "pip install 'ferrum-dl[mpi]' (brings mpi4py and an MPICH build), or mpi4py built against your "
         "cluster's MPI"),
        (("matplotlib", "matplotlib.figure"), _plots, "plotting the metrics needs matplotlib: "
         "pip install 'ferrum-dl[plot]'"),
    ],
    ids=["safetensors", "vision", "cpu-use", "cpu-memory", "mpi", "plot"],
)
def test_each_extra_is_named_when_its_package_is_missing(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    blocked: tuple[str, ...],
    use: Callable[[Path], object],
    message: str,
) -> None:
    for name in blocked:
        monkeypatch.setitem(sys.modules, name, None)
    with pytest.raises(MissingExtraError) as info:
        use(tmp_path)
    assert str(info.value) == message
    assert isinstance(info.value, ModuleNotFoundError) and info.value.name == blocked[0]


def test_a_broken_dependency_of_the_package_is_not_reported_as_missing(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # The package is installed but cannot import a dependency of its own: installing the extra would not help.
    (tmp_path / "ferrum_test_broken").mkdir()
    (tmp_path / "ferrum_test_broken" / "__init__.py").write_text("import ferrum_test_absent_dependency\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ModuleNotFoundError) as info:
        require("ferrum_test_broken", "the test feature", "test")
    assert not isinstance(info.value, MissingExtraError)
    assert info.value.name == "ferrum_test_absent_dependency"
