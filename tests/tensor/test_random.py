"""Random tensors: seeding reproduces them, every distribution stays in its
range, and sample moments fall within statistical bounds (5 sigma)."""

import math

import numpy as np
import pytest
from ferrum import ArgumentError, Bool, Distribution, DType, Float, Int, Tensor
from ferrum.backend import NdArray
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.tensors import DEVICE, FERRUM_DTYPES

N = 200_000


def sample(dist: Distribution, dtype: DType = DType.F64, n: int = N) -> np.ndarray:
    return np.array(Tensor.random((n,), dist, DEVICE, dtype=dtype).to_numpy(), dtype=np.float64)


def check_mean(x: np.ndarray, mean: float, std: float) -> None:
    bound = 5 * std / math.sqrt(x.size) + 1e-12
    assert abs(x.mean() - mean) < bound, (x.mean(), mean, bound)


def check_std(x: np.ndarray, std: float) -> None:
    # The sample std's standard error is about std / sqrt(2n) for these distributions.
    bound = 5 * std / math.sqrt(2 * x.size) * 1.5 + 1e-12
    assert abs(x.std() - std) < bound, (x.std(), std, bound)


# --------------------------------------------------------------------------- seeding


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 2**63), st.sampled_from(["f32", "f64", "i64", "bool"]))
def test_seed_reproduces(seed: int, dtype: str) -> None:
    dist = Distribution.Bernoulli(0.5) if dtype == "bool" else Distribution.Normal(0.0, 5.0)
    NdArray.seed(seed)
    a = Tensor.random((4, 33), dist, DEVICE, dtype=FERRUM_DTYPES[dtype]).to_numpy()
    b = Tensor.random((3,), Distribution.Default, DEVICE).to_numpy()
    NdArray.seed(seed)
    np.testing.assert_array_equal(
        Tensor.random((4, 33), dist, DEVICE, dtype=FERRUM_DTYPES[dtype]).to_numpy(), a
    )
    np.testing.assert_array_equal(Tensor.random((3,), Distribution.Default, DEVICE).to_numpy(), b)


def test_different_seeds_and_draws_differ() -> None:
    NdArray.seed(1)
    a = Tensor.random((64,), Distribution.Default, DEVICE).to_numpy()
    b = Tensor.random((64,), Distribution.Default, DEVICE).to_numpy()
    NdArray.seed(2)
    c = Tensor.random((64,), Distribution.Default, DEVICE).to_numpy()
    assert not np.array_equal(a, b)
    assert not np.array_equal(a, c)


def test_random_like_is_seeded_too() -> None:
    t = Tensor.zeros((5, 7), DEVICE, dtype=DType.F64)
    NdArray.seed(9)
    a = t.random_like(Distribution.Uniform(-1.0, 1.0))
    NdArray.seed(9)
    b = t.random_like(Distribution.Uniform(-1.0, 1.0))
    assert a.shape() == (5, 7) and a.dtype == DType.F64
    np.testing.assert_array_equal(a.to_numpy(), b.to_numpy())
    np.testing.assert_array_equal(t.to_numpy(), np.zeros((5, 7)))


# --------------------------------------------------------------------------- distributions


@pytest.mark.parametrize("dtype", [DType.F32, DType.F64])
def test_default_is_uniform_on_0_1(dtype: DType) -> None:
    NdArray.seed(0)
    x = sample(Distribution.Default, dtype)
    assert x.min() >= 0.0 and x.max() < 1.0
    check_mean(x, 0.5, math.sqrt(1 / 12))
    check_std(x, math.sqrt(1 / 12))
    # Every tenth of the interval gets its share.
    counts = np.histogram(x, bins=10, range=(0.0, 1.0))[0]
    expected = N / 10
    assert np.all(np.abs(counts - expected) < 5 * math.sqrt(expected))


@pytest.mark.parametrize("dtype", [DType.F32, DType.F64])
@pytest.mark.parametrize(("low", "high"), [(-3.0, 5.0), (10.0, 10.5), (-1e3, -999.0)])
def test_uniform(dtype: DType, low: float, high: float) -> None:
    NdArray.seed(1)
    x = sample(Distribution.Uniform(low, high), dtype)
    assert x.min() >= low and x.max() < high
    width = high - low
    check_mean(x, (low + high) / 2, width / math.sqrt(12))
    check_std(x, width / math.sqrt(12))


def test_uniform_f32_never_reaches_high() -> None:
    NdArray.seed(3)
    x = Tensor.random((50_000,), Distribution.Uniform(1.0, 1.0 + 2e-7), DEVICE).to_numpy()
    assert (x >= np.float32(1.0)).all()
    assert (x.astype(np.float64) < 1.0 + 2e-7).all()


@pytest.mark.parametrize("dtype", [DType.F32, DType.F64])
@pytest.mark.parametrize(("mean", "std"), [(0.0, 1.0), (-4.0, 0.25), (100.0, 10.0)])
def test_normal(dtype: DType, mean: float, std: float) -> None:
    NdArray.seed(2)
    x = sample(Distribution.Normal(mean, std), dtype)
    check_mean(x, mean, std)
    check_std(x, std)
    # About 68.3% within one std, 95.4% within two.
    within1 = np.mean(np.abs(x - mean) < std)
    within2 = np.mean(np.abs(x - mean) < 2 * std)
    assert abs(within1 - 0.6827) < 0.01 and abs(within2 - 0.9545) < 0.005


def test_normal_with_zero_std_is_constant() -> None:
    x = sample(Distribution.Normal(3.0, 0.0), n=100)
    np.testing.assert_array_equal(x, np.full(100, 3.0))


def test_ranges_f32_cannot_hold_are_sampled_or_refused() -> None:
    # These reached rand's own checks, which panicked (an internal error at the boundary).
    x = Tensor.random((64,), Distribution.Uniform(1.0, 1.0 + 1e-12), DEVICE).to_numpy()
    np.testing.assert_array_equal(x, np.ones(64, np.float32))
    assert Tensor.random((8,), Distribution.Uniform(-1e39, 1e39), DEVICE).shape() == (8,)
    with pytest.raises(ArgumentError, match=r"cannot sample Normal\(0.0, 1e\+?300\) in f32"):
        Tensor.random((4,), Distribution.Normal(0.0, 1e300), DEVICE)
    assert sample(Distribution.Normal(0.0, 1e300), DType.F64, n=4).shape == (4,)


@pytest.mark.parametrize("p", [0.0, 0.1, 0.5, 0.9, 1.0])
@pytest.mark.parametrize("dtype", ["f32", "f64", "i64", "bool"])
def test_bernoulli(p: float, dtype: str) -> None:
    NdArray.seed(4)
    t = Tensor.random((N,), Distribution.Bernoulli(p), DEVICE, dtype=FERRUM_DTYPES[dtype])
    assert t.dtype == FERRUM_DTYPES[dtype]
    x = t.to_numpy().astype(np.float64)
    assert set(np.unique(x)) <= {0.0, 1.0}
    check_mean(x, p, math.sqrt(p * (1 - p)))
    if p in (0.0, 1.0):
        assert (x == p).all()


def test_random_of_each_kind() -> None:
    NdArray.seed(5)
    f = Tensor.random((3, 4), Distribution.Default, DEVICE)
    assert f.dtype == DType.F32 and f.kind is Float and f.shape() == (3, 4)
    i = Tensor.random((1000,), Distribution.Uniform(0.0, 10.0), DEVICE, Int)
    assert i.dtype == DType.I64
    v = i.to_numpy()
    # Int truncates the samples: every integer 0..9 appears, nothing else.
    assert set(np.unique(v)) == set(range(10))
    b = Tensor.random((1000,), Distribution.Bernoulli(0.5), DEVICE, Bool)
    assert b.dtype == DType.Bool
    assert set(np.unique(b.to_numpy())) == {False, True}
    e = Tensor.random((0, 3), Distribution.Default, DEVICE)
    assert e.shape() == (0, 3)


def test_distribution_values() -> None:
    assert Distribution.Normal(0.0, 1.0) == Distribution.Normal(0.0, 1.0)
    assert Distribution.Normal(0.0, 1.0) != Distribution.Normal(0.0, 2.0)
    assert Distribution.Uniform(0.0, 1.0) != Distribution.Default
    assert Distribution.Default == Distribution.Default
    assert repr(Distribution.Bernoulli(0.25)) == "Distribution.Bernoulli(0.25)"
    assert repr(Distribution.Default) == "Distribution.Default"


@pytest.mark.parametrize(
    ("dist", "message"),
    [
        (Distribution.Bernoulli(1.5), r"random: Bernoulli probability must be in \[0, 1\], found 1.5"),
        (Distribution.Bernoulli(-0.1), "Bernoulli probability"),
        (Distribution.Uniform(1.0, 1.0), "Uniform needs finite low < high, found low=1, high=1"),
        (Distribution.Uniform(2.0, 1.0), "Uniform needs finite low < high"),
        (Distribution.Uniform(0.0, float("inf")), "Uniform needs finite low < high"),
        (Distribution.Normal(0.0, -1.0), "Normal needs a finite mean and std >= 0"),
        (Distribution.Normal(float("nan"), 1.0), "Normal needs a finite mean"),
    ],
)
def test_bad_distribution_parameters(dist: Distribution, message: str) -> None:
    with pytest.raises(ArgumentError, match=message):
        Tensor.random((3,), dist, DEVICE)
    with pytest.raises(ArgumentError, match=message):
        Tensor.zeros((2,), DEVICE).random_like(dist)


def test_random_state_resumes_the_stream_of_every_consumer() -> None:
    from ferrum.backend import Autodiff
    from ferrum.nn import DropoutConfig, LinearConfig

    NdArray.seed(3)
    Tensor.random((7,), Distribution.Default, DEVICE)  # leave the generator mid-block
    state = NdArray.random_state()
    assert isinstance(state, bytes) and len(state) == 56

    def draws() -> list[list[float]]:
        train = Autodiff[NdArray].device()
        mask = DropoutConfig(0.5).init().forward(Tensor.ones((50,), train)).inner()
        layer = LinearConfig(3, 2).init(DEVICE)
        big = Tensor.random((40_000,), Distribution.Normal(0.0, 1.0), DEVICE)
        return [mask.to_data().to_list(), layer.weight.val().to_data().to_list(), big.to_data().to_list()]

    first = draws()
    NdArray.seed(99)  # anything in between
    Tensor.random((5,), Distribution.Default, DEVICE)
    Autodiff[NdArray].set_random_state(state)  # one generator for every backend
    assert draws() == first
    assert NdArray.random_state() != state


@pytest.mark.parametrize("bad", [b"", b"\x00" * 55, b"\x00" * 57])
def test_set_random_state_rejects_foreign_bytes(bad: bytes) -> None:
    with pytest.raises(ArgumentError, match=rf"56 bytes \(from random_state\(\)\), found {len(bad)}"):
        NdArray.set_random_state(bad)
