# ruff: noqa: E501
# (the programs' marks quote mypy's messages whole, so their lines are long)
"""mypy --strict with ``ferrum.mypy`` rejects the training, optimizer, record and device mistakes Burn rejects.

Each program below is one mistake (or the correct version of several), marked
as in test_mypy_plugin.py: ``# E: <text>`` is an error on that line whose
message contains <text>, ``# R: <type>`` a revealed type; every other line must
be clean. ``training_defs`` holds the models, loaders and helpers the programs
share. All programs are checked in one mypy run; the mistakes that plain types
catch (no plugin needed) are checked once more by mypy without the plugin and
by pyright.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.support.mypy_marks import Reports, check_marks, expected, run_mypy

DEFS = '''
from __future__ import annotations

from typing import TypeVar

from ferrum import D1, D2, Int, Tensor
from ferrum.backend import Autodiff, Backend, NdArray
from ferrum.data.dataloader import DataLoader
from ferrum.module import Module
from ferrum.nn import Linear, LinearConfig
from ferrum.nn.loss import CrossEntropyLossConfig, MseLoss
from ferrum.train import ClassificationOutput, RegressionOutput, SupervisedTraining, TrainOutput

B = TypeVar("B", bound=Backend)
I = TypeVar("I", bound=Backend)

AD = Autodiff[NdArray]
Pair = tuple[Tensor[B, D2], Tensor[B, D1, Int]]


class Regressor(Module[B]):
    fc: Linear[B]

    def step(self, x: Tensor[B, D2]) -> RegressionOutput[B]:
        out = self.fc.forward(x)
        return RegressionOutput(MseLoss().forward(out, x), out, x)

    def train_step(
        self: Regressor[Autodiff[I]], x: Tensor[Autodiff[I], D2]
    ) -> TrainOutput[RegressionOutput[Autodiff[I]]]:
        item = self.step(x)
        return TrainOutput(self, item.loss.backward(), item)

    def inference_step(self, x: Tensor[B, D2]) -> RegressionOutput[B]:
        return self.step(x)


class Classifier(Module[B]):
    fc: Linear[B]

    def step(self, batch: Pair[B]) -> ClassificationOutput[B]:
        out = self.fc.forward(batch[0])
        loss = CrossEntropyLossConfig().init(out.device()).forward(out, batch[1])
        return ClassificationOutput(loss, out, batch[1])

    def train_step(
        self: Classifier[Autodiff[I]], batch: Pair[Autodiff[I]]
    ) -> TrainOutput[ClassificationOutput[Autodiff[I]]]:
        item = self.step(batch)
        return TrainOutput(self, item.loss.backward(), item)

    def inference_step(self, batch: Pair[B]) -> ClassificationOutput[B]:
        return self.step(batch)


def regressor(device_of: type[B]) -> Regressor[B]:
    return Regressor(LinearConfig(2, 2).init(device_of.device()))


def loader_on(backend: type[B]) -> DataLoader[Tensor[B, D2]]:
    raise NotImplementedError  # only type-checked, never run


def pair_loader(backend: type[B]) -> DataLoader[Pair[B]]:
    raise NotImplementedError  # only type-checked, never run


def training() -> SupervisedTraining[Tensor[AD, D2], Tensor[NdArray, D2]]:
    return SupervisedTraining("artifacts", loader_on(AD), loader_on(NdArray))
'''

HEADER = """\
from __future__ import annotations

from typing import TypeVar

from ferrum import D1, D2, D3, Int, Tensor
from ferrum.backend import Autodiff, Backend, NdArray
from ferrum.module import Module
from ferrum.nn import Embedding, EmbeddingConfig, LinearConfig
from ferrum.optim import GradientsParams, SgdConfig
from ferrum.train import Learner, SupervisedTraining, TrainOutput
from ferrum.train.metric import AccuracyMetric, LossMetric
from training_defs import AD, Classifier, Regressor, loader_on, pair_loader, regressor, training

B = TypeVar("B", bound=Backend)
"""

SNIPPETS = {
    # ---- the Learner and SupervisedTraining (the ferrum.mypy plugin)
    "launch_ok": """
        def make_learner(model: Regressor[B]) -> Learner[Regressor[B]]:
            return Learner(model, SgdConfig().init(), 0.1)

        result = (
            training()
            .metrics(LossMetric())
            .metric_valid(LossMetric())
            .num_epochs(2)
            .launch(make_learner(regressor(AD)))
        )
        reveal_type(result.model)  # R: training_defs.Regressor[ferrum.backend.NdArray]
        pairs = SupervisedTraining("artifacts", loader_on(AD), loader_on(NdArray))
        classifier = Classifier(LinearConfig(2, 3).init(AD.device()))
        loaders = SupervisedTraining("artifacts", pair_loader(AD), pair_loader(NdArray))
        loaders.metrics(AccuracyMetric(), LossMetric()).launch(Learner(classifier, SgdConfig().init(), 0.1))
        """,
    "m1_train_batches_on_inner_backend": """
        inner = loader_on(NdArray)
        run = SupervisedTraining("artifacts", inner, inner)
        run.launch(Learner(regressor(AD), SgdConfig().init(), 0.1))  # E: dataloader_train yields "Tensor[NdArray, D2, Float]", but Regressor[Autodiff[NdArray]].train_step takes "Tensor[Autodiff[NdArray], D2, Float]"
        """,
    "m2_valid_batches_on_autodiff_backend": """
        run = SupervisedTraining("artifacts", loader_on(AD), loader_on(AD))
        run.launch(Learner(regressor(AD), SgdConfig().init(), 0.1))  # E: dataloader_valid yields "Tensor[Autodiff[NdArray], D2, Float]", but Regressor[NdArray].inference_step takes "Tensor[NdArray, D2, Float]" (validation runs model.valid(), on the inner backend)
        """,
    "m3_no_train_step": """
        class Untrainable(Module[B]):
            def inference_step(self, x: Tensor[B, D2]) -> Tensor[B, D2]:
                return x

        model = Untrainable[AD]()
        training().launch(Learner(model, SgdConfig().init(), 0.1))  # E: Untrainable[Autodiff[NdArray]] has no train_step(batch) method: the Learner needs it (Burn's TrainStep
        """,
    "m4_train_step_returns_the_item": """
        from ferrum.train import RegressionOutput

        class ItemOnly(Regressor[B]):
            def train_step(self, x: Tensor[B, D2]) -> RegressionOutput[B]:  # type: ignore[override]
                return self.step(x)

        model = ItemOnly(LinearConfig(2, 2).init(AD.device()))
        training().launch(Learner(model, SgdConfig().init(), 0.1))  # E: ItemOnly[Autodiff[NdArray]].train_step must return a TrainOutput (TrainOutput(self, loss.backward(), item)), found "RegressionOutput[Autodiff[NdArray]]"
        """,
    "m5_metric_reads_another_output": """
        result = (
            training()
            .metrics(AccuracyMetric(), LossMetric())  # E: AccuracyMetric cannot read the training step output "RegressionOutput[Any]"
            .metric_valid(AccuracyMetric())  # E: AccuracyMetric cannot read the validation step output
            .launch(Learner(regressor(AD), SgdConfig().init(), 0.1))
        )
        """,
    "m6_plain_model_through_a_generic_helper": """
        def make_learner(model: Regressor[B]) -> Learner[Regressor[B]]:
            return Learner(model, SgdConfig().init(), 0.1)

        learner = make_learner(regressor(NdArray))
        reveal_type(learner)  # R: ferrum.train.learner.Learner[training_defs.Regressor[ferrum.backend.NdArray]]
        training().launch(learner)  # E: launch trains the Learner's model on an autodiff backend (e.g. "Autodiff[NdArray]"), found "Regressor[NdArray]"
        """,
    # ---- optimizer, gradients and devices (plain types; the plugin types valid())
    "m7_grads_from_the_inner_copy": """
        model = regressor(AD)
        loss = model.step(Tensor.ones((1, 2), AD.device())).loss
        GradientsParams.from_grads(loss.backward(), model.valid())  # E: Argument 2 to "from_grads" of "GradientsParams" has incompatible type "Regressor[NdArray]"; expected "Module[Autodiff[Any, Any]]"
        """,
    "m8_step_the_inner_copy": """
        model = regressor(AD)
        loss = model.step(Tensor.ones((1, 2), AD.device())).loss
        grads = GradientsParams.from_grads(loss.backward(), model)
        SgdConfig().init().step(0.1, model.valid(), grads)  # E: Value of type variable "M" of "step" of "Optimizer" cannot be "Regressor[NdArray]"
        """,
    "m9_model_record_into_the_optimizer": """
        model = regressor(AD)
        optimizer = SgdConfig().init()
        checkpoint = {"model": model.into_record()}
        optimizer.load_record(checkpoint["model"])  # E: Sgd.load_record takes an optimizer's record (optimizer.to_record()), found the record of a Regressor module (Regressor.into_record())
        """,
    "m10_record_of_another_module": """
        from ferrum.nn import Linear

        class Mlp(Module[B]):
            first: Linear[B]
            second: Linear[B]

        device = NdArray.device()
        mlp = Mlp(LinearConfig(2, 2).init(device), LinearConfig(2, 1).init(device))
        linear_record = LinearConfig(2, 2).init(device).into_record()
        reveal_type(linear_record)  # R: ferrum.record.base.ModuleRecord[ferrum.nn.linear.Linear[ferrum.backend.NdArray]]
        mlp.load_record(linear_record)  # E: Mlp.load_record takes the record of a Mlp, found the record of a Linear
        mlp.load_record(SgdConfig().init().to_record())  # E: Mlp.load_record takes the record of a Mlp (its into_record()), found an optimizer's record
        """,
    "records_ok": """
        from ferrum.record import CompactRecorder

        model = regressor(AD)
        optimizer = SgdConfig().init()
        reveal_type(model.load_record(regressor(NdArray).into_record()))  # R: training_defs.Regressor[ferrum.backend.Autodiff[ferrum.backend.NdArray, Any]]
        optimizer = optimizer.load_record(optimizer.to_record())
        loaded = CompactRecorder().load("model", AD.device())
        model = model.load_record(loaded)
        optimizer = optimizer.load_record(loaded)
        """,
    "m11_device_of_another_backend": """
        model = regressor(AD)
        model.to_device(NdArray.device())  # E: Argument 1 to "to_device" of "Module" has incompatible type "Device[NdArray]"
        """,
    "m12_flatten_rank": """
        embedding: Embedding[NdArray] = EmbeddingConfig(10, 4).init(NdArray.device())
        tokens = Tensor.zeros((2, 3), NdArray.device()).int()
        embedding.forward(tokens.flatten(0, 1))  # E: Argument 1 to "forward" of "Embedding" has incompatible type "Tensor[NdArray, D1, Int]"; expected "Tensor[NdArray, D2, Int]"
        """,
    "types_ok": """
        model = regressor(AD)
        loss = model.step(Tensor.ones((1, 2), AD.device())).loss
        grads = GradientsParams.from_grads(loss.backward(), model)
        stepped = SgdConfig().init().step(0.1, model, grads)
        reveal_type(stepped)  # R: training_defs.Regressor[ferrum.backend.Autodiff[ferrum.backend.NdArray, Any]]
        reveal_type(model.to_device(AD.device()))  # R: training_defs.Regressor[ferrum.backend.Autodiff[ferrum.backend.NdArray, Any]]
        reveal_type(regressor(NdArray).to_device(AD.device()))  # R: training_defs.Regressor[ferrum.backend.Autodiff[ferrum.backend.NdArray, Any]]
        reveal_type(regressor(NdArray).to_device(NdArray.device()))  # R: training_defs.Regressor[ferrum.backend.NdArray]
        x = Tensor.zeros((2, 3, 4), NdArray.device())
        reveal_type(x.flatten(0, 1))  # R: ferrum._ferrum._tensor.Tensor[ferrum.backend.NdArray, ferrum.tensor.rank.D2, ferrum._ferrum._kind.Float]
        reveal_type(x.flatten(0, -1))  # R: ferrum._ferrum._tensor.Tensor[ferrum.backend.NdArray, ferrum.tensor.rank.D1, ferrum._ferrum._kind.Float]
        reveal_type(x.flatten(-2, 2))  # R: ferrum._ferrum._tensor.Tensor[ferrum.backend.NdArray, ferrum.tensor.rank.D2, ferrum._ferrum._kind.Float]
        embedding = EmbeddingConfig(10, 4).init(NdArray.device())
        tokens = Tensor.zeros((2, 3, 1), NdArray.device()).int()
        embedded: Tensor[NdArray, D3] = embedding.forward(tokens.flatten(1, 2))

        def generic_step(model: Regressor[Autodiff[B]], grads: GradientsParams) -> Regressor[Autodiff[B]]:
            return SgdConfig().init().step(0.1, model, grads)
        """,
}

#: Mistakes plain types catch, without the plugin (and so under pyright too). ``valid()`` needs the plugin
#: to be typed on the inner backend, so these programs spell the inner-backend model's type out.
TYPES_ONLY = {
    "plain_grads_and_step": """
        inner: Regressor[NdArray] = regressor(NdArray)
        model = regressor(AD)
        loss = model.step(Tensor.ones((1, 2), AD.device())).loss
        GradientsParams.from_grads(loss.backward(), inner)  # E: Regressor[NdArray]
        grads = GradientsParams.from_grads(loss.backward(), model)
        SgdConfig().init().step(0.1, inner, grads)  # E: Regressor[NdArray]
        SgdConfig().init().step(0.1, model, grads)
        """,
    "plain_device": """
        model = regressor(AD)
        model.to_device(NdArray.device())  # E: Device[NdArray]
        regressor(NdArray).to_device(AD.device())
        """,
    "plain_flatten": """
        embedding: Embedding[NdArray] = EmbeddingConfig(10, 4).init(NdArray.device())
        tokens = Tensor.zeros((2, 3), NdArray.device()).int()
        embedding.forward(tokens.flatten(0, 1))  # E: Tensor[NdArray, D1, Int]
        embedded: Tensor[NdArray, D3] = embedding.forward(tokens.flatten(0, 1).unsqueeze_dim(0))
        """,
}


def write(directory: Path) -> None:
    (directory / "training_defs.py").write_text(DEFS)
    for name, body in SNIPPETS.items():
        (directory / f"{name}.py").write_text(HEADER + textwrap.dedent(body))


@pytest.fixture(scope="module")
def snippet_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("training_mistakes")
    write(directory)
    return directory


@pytest.fixture(scope="module")
def findings(snippet_dir: Path) -> dict[str, list[tuple[str, int, str]]]:
    files = [str(snippet_dir / "training_defs.py"), *(str(snippet_dir / f"{n}.py") for n in SNIPPETS)]
    return run_mypy(snippet_dir, files, plugin=True)


def check(name: str, got: Reports) -> None:
    check_marks(name, HEADER + textwrap.dedent(SNIPPETS[name]), got)


def test_shared_definitions_are_clean(findings: dict[str, list[tuple[str, int, str]]]) -> None:
    assert findings.get("training_defs", []) == []


@pytest.mark.parametrize("name", list(SNIPPETS))
def test_program(name: str, findings: dict[str, list[tuple[str, int, str]]]) -> None:
    check(name, findings.get(name, []))


@pytest.fixture(scope="module")
def plain_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("training_mistakes_plain")
    (directory / "training_defs.py").write_text(DEFS)
    for name, body in TYPES_ONLY.items():
        (directory / f"{name}.py").write_text(HEADER + textwrap.dedent(body))
    return directory


def marked_errors(name: str) -> dict[int, str]:
    return {m.line: m.text for m in expected(HEADER + textwrap.dedent(TYPES_ONLY[name])) if m.kind == "E"}


def test_plain_types_catch_these_without_the_plugin(plain_dir: Path) -> None:
    files = [str(plain_dir / "training_defs.py"), *(str(plain_dir / f"{n}.py") for n in TYPES_ONLY)]
    found = run_mypy(plain_dir, files, plugin=False)
    assert found.get("training_defs", []) == []
    for name in TYPES_ONLY:
        errors = {(line, message) for kind, line, message in found.get(name, []) if kind == "error"}
        for line, text in marked_errors(name).items():
            assert any(at == line and text in message for at, message in errors), (name, line, sorted(errors))
        assert {line for line, _ in errors} == set(marked_errors(name)), (name, sorted(errors))


@pytest.mark.skipif(importlib.util.find_spec("pyright") is None, reason="pyright is not installed")
def test_pyright_agrees_where_no_plugin_is_needed(plain_dir: Path) -> None:
    # Strict, but the shared header imports more than each program uses.
    settings = {"typeCheckingMode": "strict", "reportUnusedImport": False, "reportUnusedVariable": False}
    (plain_dir / "pyrightconfig.json").write_text(json.dumps(settings))
    files = [str(plain_dir / f"{name}.py") for name in TYPES_ONLY]
    proc = subprocess.run(
        [sys.executable, "-m", "pyright", "--outputjson", "--pythonpath", sys.executable,
         "--project", str(plain_dir), *files],
        capture_output=True, text=True, timeout=600,
    )
    report = json.loads(proc.stdout)
    errors = [d for d in report["generalDiagnostics"] if d["severity"] == "error"]
    for name in TYPES_ONLY:
        path = (plain_dir / f"{name}.py").resolve()
        mine = [(int(d["range"]["start"]["line"]) + 1, d["message"]) for d in errors if Path(d["file"]).resolve() == path]
        assert {line for line, _ in mine} == set(marked_errors(name)), (name, mine)
