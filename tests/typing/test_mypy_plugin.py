"""The mypy plugin `ferrum.mypy`: what mypy accepts and rejects in code using `@config` and the Learner.

Each snippet marks its expectations inline: `# E: <text>` means mypy reports an
error on that line containing <text>, `# R: <type>` means `reveal_type` on that
line shows <type>. Every other line must be clean. All snippets are checked in
one mypy run (mypy is slow to start); one more test uses a config from mypy's
cache, where its class is rebuilt from serialized data instead of by the hook.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from mypy import api

from tests.support.mypy_marks import LINE, REPO_PYTHON, Reports, check_marks, run_mypy

HEADER = """\
from __future__ import annotations

from pathlib import Path
from typing import Optional

from ferrum import config
"""

SNIPPETS = {
    "ok": """
        @config
        class Exp:
            hidden_size: int
            dropout: float = 0.5
            name: str = "mlp"

        tuned = Exp(64).with_dropout(0.3).with_dropout(1).with_name("x").with_hidden_size(2)
        reveal_type(tuned)  # R: ok.Exp
        reveal_type(Exp.with_dropout)  # R: def (self: ok.Exp, value: float) -> ok.Exp
        """,
    "builders_bad": """
        @config
        class ExperimentConfig:
            hidden_size: int
            dropout: float = 0.5
            layers: tuple[int, ...] = ()
            decay: Optional[float] = None

        c = ExperimentConfig(64)
        c.with_dropout("high")  # E: "with_dropout" of "ExperimentConfig" has incompatible type "str"
        c.with_dropout("high")  # E: expected "float"
        c.with_hidden_size(1.5)  # E: expected "int"
        c.with_layers([1, 2])  # E: expected "tuple[int, ...]"
        c.with_layers((1, 2)).with_decay(None).with_decay(0.1)
        c.with_missing(1)  # E: "ExperimentConfig" has no attribute "with_missing"
        c.with_dropout()  # E: Missing positional argument "value"
        """,
    "init_is_checked": """
        @config
        class ExperimentConfig:
            hidden_size: int
            dropout: float = 0.5

        ExperimentConfig()  # E: Missing positional argument "hidden_size" in call to "ExperimentConfig"
        ExperimentConfig("wide")  # E: "ExperimentConfig" has incompatible type "str"; expected "int"
        ExperimentConfig(1, 0.5, 3)  # E: Too many arguments for "ExperimentConfig"
        ExperimentConfig(hidden_size=1, dropout=1)
        """,
    "rebinding": """
        from ferrum import D2, D3, Tensor
        from ferrum.backend import NdArray

        def flatten(t: Tensor[NdArray, D3]) -> Tensor[NdArray, D2]:
            return t.flatten(0, 1)

        def needs_rank_3(t: Tensor[NdArray, D3]) -> None:
            pass

        x = Tensor.zeros((2, 3, 4), NdArray.device())
        needs_rank_3(x)
        x = flatten(x)
        needs_rank_3(x)  # E: incompatible type "Tensor[NdArray, D2, Float]"
        _ = x
        for _ in range(3):
            pass
        """,
    "configs_are_frozen": """
        @config
        class ExperimentConfig:
            hidden_size: int

        cfg = ExperimentConfig(1)
        cfg.hidden_size = 2  # E: Property "hidden_size" defined in "ExperimentConfig" is read-only
        """,
    "json_methods": """
        @config
        class ExperimentConfig:
            hidden_size: int

        @config
        class TrainingConfig:
            experiment: ExperimentConfig
            batch_size: int = 64

        cfg = TrainingConfig(ExperimentConfig(1))
        cfg.save("training.json")
        cfg.save(Path("training.json"))
        cfg.save(3)  # E: Argument 1 to "save" of "TrainingConfig" has incompatible type "int"
        reveal_type(TrainingConfig.load("training.json"))  # R: json_methods.TrainingConfig
        reveal_type(TrainingConfig.load(Path("training.json")).experiment)  # R: json_methods.ExperimentConfig
        reveal_type(cfg.to_dict())  # R: dict[str, Any]
        reveal_type(TrainingConfig.from_dict(cfg.to_dict()))  # R: json_methods.TrainingConfig
        TrainingConfig.from_dict([1])  # E: "from_dict" of "TrainingConfig" has incompatible type
        """,
    "user_methods_are_kept": """
        @config
        class MlpConfig:
            hidden: int
            scale: int = 1

            def init(self, offset: int) -> list[int]:
                return [self.hidden * self.scale + offset]

            def with_scale(self, value: str) -> MlpConfig:
                return MlpConfig(self.hidden, len(value))

        reveal_type(MlpConfig(2).init(1))  # R: list[int]
        MlpConfig(2).with_scale("abc")
        MlpConfig(2).init("x")  # E: "init" of "MlpConfig" has incompatible type "str"
        """,
    "subclasses": """
        @config
        class Base:
            size: int

        @config
        class Wide(Base):
            width: int = 2

        reveal_type(Wide(1).with_size(3))  # R: subclasses.Wide
        reveal_type(Wide(1).with_width(3))  # R: subclasses.Wide
        Wide()  # E: Missing positional argument "size"
        """,
    "other_spellings": """
        import ferrum
        from ferrum.config import config as make_config

        @ferrum.config
        class A:
            size: int

        @make_config
        class B:
            size: int

        reveal_type(A(1).with_size(2))  # R: other_spellings.A
        reveal_type(B(1).with_size(2))  # R: other_spellings.B
        B()  # E: Missing positional argument "size"
        """,
    "learner_typing": """
        from typing import TypeVar

        from ferrum import D2, Tensor
        from ferrum.backend import Autodiff, Backend, NdArray
        from ferrum.module import Module
        from ferrum.nn import Linear, LinearConfig
        from ferrum.optim import SgdConfig
        from ferrum.train import Learner, RegressionOutput, SupervisedTraining, TrainOutput

        B = TypeVar("B", bound=Backend)
        I = TypeVar("I", bound=Backend)

        class Net(Module[B]):
            fc: Linear[B]

            def step(self, x: Tensor[B, D2]) -> RegressionOutput[B]:
                out = self.fc.forward(x)
                return RegressionOutput((out - x).powf_scalar(2.0).mean(), out, x)

            def train_step(
                self: Net[Autodiff[I]], x: Tensor[Autodiff[I], D2]
            ) -> TrainOutput[RegressionOutput[Autodiff[I]]]:
                item = self.step(x)
                return TrainOutput(self, item.loss.backward(), item)

            def inference_step(self, x: Tensor[B, D2]) -> RegressionOutput[B]:
                return self.step(x)

        Loaders = SupervisedTraining[Tensor[Autodiff[NdArray], D2], Tensor[NdArray, D2]]

        def run(training: Loaders) -> Net[NdArray]:
            model = Net(LinearConfig(2, 2).init(Autodiff[NdArray].device()))
            result = training.launch(Learner(model, SgdConfig().init(), 0.1))
            reveal_type(result.model)  # R: learner_typing.Net[ferrum.backend.NdArray]
            reveal_type(result.model.fc)  # R: ferrum.nn.linear.Linear[ferrum.backend.NdArray]
            reveal_type(result.stop_reason)  # R: str | None
            still_autodiff: Net[Autodiff[NdArray]] = result.model  # E: Incompatible types in assignment
            plain = Net(LinearConfig(2, 2).init(NdArray.device()))
            plain.train_step(Tensor.ones((1, 2), NdArray.device()))  # E: Invalid self argument
            Learner(plain, SgdConfig().init(), 0.1)  # E: Learner trains a model on an autodiff backend
            Learner("model", SgdConfig().init(), 0.1)  # E: Value of type variable "M" of "Learner"
            Learner(model, SgdConfig().init(), "fast")  # E: Argument 3 to "Learner" has incompatible type
            return result.model

        def generic(model: Net[B]) -> None:
            Learner(model, SgdConfig().init(), 0.1)  # a type variable may be an autodiff backend
        """,
    "configs_defs": """
        @config
        class LayerConfig:
            size: int
            bias: bool = True
        """,
    "configs_use": """
        from configs_defs import LayerConfig

        reveal_type(LayerConfig(3).with_bias(False))  # R: configs_defs.LayerConfig
        LayerConfig(3).with_bias("no")  # E: expected "bool"
        LayerConfig()  # E: Missing positional argument "size"
        """,
}


def write_snippets(directory: Path) -> dict[str, str]:
    sources = {name: HEADER + textwrap.dedent(body) for name, body in SNIPPETS.items()}
    for name, source in sources.items():
        (directory / f"{name}.py").write_text(source)
    return sources


@pytest.fixture(scope="module")
def findings(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[tuple[str, int, str]]]:
    directory = tmp_path_factory.mktemp("snippets")
    write_snippets(directory)
    return run_mypy(directory, [str(directory / f"{name}.py") for name in SNIPPETS], plugin=True)


def check(name: str, got: Reports) -> None:
    check_marks(name, HEADER + textwrap.dedent(SNIPPETS[name]), got)


@pytest.mark.parametrize("name", list(SNIPPETS))
def test_snippet(name: str, findings: dict[str, list[tuple[str, int, str]]]) -> None:
    check(name, findings.get(name, []))


def test_config_read_from_the_cache(tmp_path: Path) -> None:
    write_snippets(tmp_path)
    # configs_defs is checked alone first, so the second run reads LayerConfig from mypy's cache
    # (serialized methods), not from the plugin hook.
    assert run_mypy(tmp_path, [str(tmp_path / "configs_defs.py")], plugin=True) == {}
    second = run_mypy(tmp_path, [str(tmp_path / "configs_use.py")], plugin=True)
    check("configs_use", second.get("configs_use", []))


def test_without_plugin_dataclass_transform_still_checks_fields(tmp_path: Path) -> None:
    source = HEADER + textwrap.dedent(
        """
        @config
        class ExperimentConfig:
            hidden_size: int
            dropout: float = 0.5

        ExperimentConfig()
        ExperimentConfig(1).hidden_size = 2
        ExperimentConfig(1).with_dropout(0.1)
        """
    )
    (tmp_path / "plain.py").write_text(source)
    found = run_mypy(tmp_path, [str(tmp_path / "plain.py")], plugin=False)["plain"]
    messages = [message for _, _, message in found]
    assert any('Missing positional argument "hidden_size"' in m for m in messages), messages
    assert any('"hidden_size" defined in "ExperimentConfig" is read-only' in m for m in messages), messages
    # The builders are the plugin's job; plain typing cannot describe them.
    assert any('"ExperimentConfig" has no attribute "with_dropout"' in m for m in messages), messages


@pytest.mark.parametrize("file_name", ["mypy.ini", "pyproject.toml"])
def test_rebinding_can_be_turned_off(tmp_path: Path, file_name: str) -> None:
    write_snippets(tmp_path)
    if file_name == "mypy.ini":
        off = "[ferrum-mypy]\nallow_redefinition = false\n"
        found = run_mypy(tmp_path, [str(tmp_path / "rebinding.py")], True, off)
    else:
        (tmp_path / "pyproject.toml").write_text(
            "[tool.mypy]\nstrict = true\n"
            f"mypy_path = {str(REPO_PYTHON)!r}\n"
            'plugins = ["ferrum.mypy"]\n'
            "[tool.ferrum-mypy]\nallow_redefinition = false\n"
        )
        stdout, stderr, _ = api.run(
            ["--config-file", str(tmp_path / "pyproject.toml"), "--cache-dir", str(tmp_path / ".mypy_cache"),
             "--no-error-summary", "--no-pretty", str(tmp_path / "rebinding.py")]
        )
        assert not stderr, stderr
        lines = [match for match in map(LINE.match, stdout.splitlines()) if match]
        found = {"rebinding": [("error", int(m["line"]), m["message"]) for m in lines]}
    messages = [message for _, _, message in found["rebinding"]]
    # Each rebinding to another type is now an error, as in plain mypy.
    assert sum("Incompatible types in assignment" in m for m in messages) == 2, messages
