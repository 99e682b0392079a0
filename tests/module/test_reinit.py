"""ferrum.module.Reinitializer against Burn 0.20.1's rules (crates/burn-core/src/module/reinit.rs).

Burn's random rule draws from Rust's ``StdRng`` (``rand`` 0.9: ChaCha12 keyed by
``seed_from_u64``) through ``Uniform<f64>``. The NumPy generator behind it is checked
piece by piece against independent references: ChaCha20's published keystream (the
``rand_chacha`` test vectors), and the compiled ``rand`` crate inside ferrum's engine
(its seed expansion, its ChaCha12 words and its ``Uniform<f64>``). The range and
constant rules are checked against NumPy arithmetic in the tensor's dtype.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from ferrum import D1, D2, ArgumentError, Distribution, DType, Int, KindError, Tensor
from ferrum.backend import Autodiff, NdArray
from ferrum.module import Module, Param, ParamId, Reinitializer
from ferrum.module.reinit import _chacha_blocks, _seed_key, _stdrng_u64, _uniform_from_words
from ferrum.nn import LinearConfig
from ferrum.nn.norm.batch import BatchNormConfig

DEVICE = NdArray.device()
U64 = (1 << 64) - 1


# --- the generator, against independent references


def test_chacha_core_matches_the_published_chacha20_keystream() -> None:
    # rand_chacha 0.9, chacha.rs, test_chacha_true_values_a: all-zero key, blocks 0 and 1.
    words = np.concatenate([block for _, block in _chacha_blocks(bytes(32), 32, rounds=20)])
    assert [int(w) for w in words[:16]] == [
        0xADE0B876, 0x903DF1A0, 0xE56A5D40, 0x28BD8653, 0xB819D2BD, 0x1AED8DA0, 0xCCEF36A8, 0xC70D778B,
        0x7C5941DA, 0x8D485751, 0x3FE02477, 0x374AD8B8, 0xF4B8436A, 0x1CA11815, 0x69B687C3, 0x8665EEB2,
    ]  # fmt: skip
    assert [int(w) for w in words[16:]] == [
        0xBEE7079F, 0x7A385155, 0x7C97BA98, 0x0D082D73, 0xA0290FCB, 0x6965E348, 0x3E53C612, 0xED7AEE32,
        0x7621B729, 0x434EE69C, 0xB03371D5, 0xD539D874, 0x281FED31, 0x45FB0A51, 0x1F0AE1AC, 0x6F4D794B,
    ]  # fmt: skip


@pytest.mark.parametrize("seed", [0, 1, 42, 2**63 + 5, U64])
def test_seed_expansion_matches_rand_core(seed: int) -> None:
    # The engine keys its ChaCha12 generator with rand_core's seed_from_u64 and reports the key.
    NdArray.seed(seed)
    state = NdArray.random_state()
    assert state[:32] == _seed_key(seed)
    assert state[32:] == bytes(24)  # stream 0, word position 0


def _xoshiro256pp(seed: int) -> Iterator[int]:
    """rand 0.9's SmallRng on 64-bit targets, seeded by SplitMix64 (written from the algorithm)."""

    def rotl(x: int, k: int) -> int:
        return ((x << k) | (x >> (64 - k))) & U64

    s, state = [], seed
    for _ in range(4):
        state = (state + 0x9E3779B97F4A7C15) & U64
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & U64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & U64
        s.append(z ^ (z >> 31))
    while True:
        out = (rotl((s[0] + s[3]) & U64, 23) + s[0]) & U64
        t = (s[1] << 17) & U64
        s[2] ^= s[0]
        s[3] ^= s[1]
        s[1] ^= s[2]
        s[0] ^= s[3]
        s[2] ^= t
        s[3] = rotl(s[3], 45)
        yield out


#: The engine draws a seed per piece of this many samples from its ChaCha12 generator
#: (rust/ferrum-core/src/random.rs, PIECE) and samples each piece from a SmallRng.
PIECE = 1 << 14


@pytest.mark.parametrize("seed", [3, 2**40 + 1])
def test_chacha12_words_match_the_compiled_rand_crate(seed: int) -> None:
    # Piece k of a seeded engine draw starts from SmallRng::seed_from_u64(k-th u64 of StdRng(seed)):
    # 40 pieces cover the first 80 ChaCha12 words (5 blocks, across the 64-word buffer refill).
    pieces = 40
    NdArray.seed(seed)
    drawn = Tensor.random((pieces * PIECE,), Distribution.Uniform(-2.0, 3.0), DEVICE, dtype=DType.F64)
    firsts = drawn.to_numpy()[::PIECE]
    words = _stdrng_u64(seed, pieces)
    for k in range(pieces):
        small = _xoshiro256pp(int(words[k]))
        bits = (next(small) >> 12) | 0x3FF0000000000000
        expected = (struct.unpack("<d", struct.pack("<Q", bits))[0] - 1.0) * 5.0 - 2.0
        assert firsts[k] == expected, f"piece {k}"


@pytest.mark.parametrize(
    ("low", "high"), [(-2.0, 3.0), (0.99999999997819644, 1.0), (-1e-3, 1e300), (5.0, 5.000000000000001)]
)
def test_uniform_float_matches_the_compiled_rand_crate(low: float, high: float) -> None:
    # rand's Uniform<f64> as the engine runs it, on the SmallRng words of the first piece.
    NdArray.seed(9)
    drawn = Tensor.random((256,), Distribution.Uniform(low, high), DEVICE, dtype=DType.F64).to_numpy()
    small = _xoshiro256pp(int(_stdrng_u64(9, 1)[0]))
    words = np.array([next(small) for _ in range(256)], dtype=np.uint64)
    got = _uniform_from_words(words, low, high)
    np.testing.assert_array_equal(got, drawn)
    # rand only promises no value above high: a range a few ulps wide can round onto it.
    assert np.all((got >= low) & (got <= high))


# --- the rules on modules


class Two(Module[Any]):
    weight: Param[Tensor[Any, D2]]
    bias: Param[Tensor[Any, D1]]


def two(backend_device: Any = DEVICE, dtype: DType = DType.F32) -> Two:
    return Two(
        Param(Tensor.ones((3, 4), backend_device, dtype=dtype)),
        Param(Tensor.ones((5,), backend_device, dtype=dtype)),
    )


def test_default_is_constant_zero() -> None:
    out = Reinitializer().apply(two())
    assert out.weight.val().to_numpy().tolist() == np.zeros((3, 4)).tolist()
    assert out.bias.val().to_numpy().tolist() == [0.0] * 5


def test_constant_float_and_its_int_truncation() -> None:
    model = Reinitializer().constant(-2.75).apply(two())
    np.testing.assert_array_equal(model.weight.val().to_numpy(), np.full((3, 4), -2.75, np.float32))
    ints = Tensor.zeros((2, 2), DEVICE, Int)
    assert Reinitializer().constant(-2.75).map_int(ParamId.new(), ints).to_data().to_list() == [[-2, -2]] * 2
    assert Reinitializer().constant(2.75).map_int(ParamId.new(), ints).to_data().to_list() == [[2, 2]] * 2
    assert Reinitializer().constant_int(7).map_int(ParamId.new(), ints).to_data().to_list() == [[7, 7]] * 2


@pytest.mark.parametrize(("dtype", "np_dtype"), [(DType.F32, np.float32), (DType.F64, np.float64)])
def test_range_float_follows_burns_formula(dtype: DType, np_dtype: Any) -> None:
    out = Reinitializer().range_float(-0.3, 0.7).apply(two(dtype=dtype))
    for param, n in ((out.weight, 12), (out.bias, 5)):
        # Burn: arange(0..n).float() * elem(factor) + elem(min), factor = (max - min) / n in f64.
        factor, bias = np_dtype((0.7 - -0.3) / n), np_dtype(-0.3)
        expected = (np.arange(n, dtype=np_dtype) * factor + bias).reshape(param.shape())
        got = param.val().to_numpy()
        assert got.dtype == np_dtype
        np.testing.assert_array_equal(got, expected)


def test_range_hand_computed() -> None:
    out = Reinitializer().range(0.0, 1.0).apply(two())
    assert out.bias.val().to_data().to_list() == pytest.approx([0.0, 0.2, 0.4, 0.6, 0.8], abs=1e-7)
    second_row = out.weight.val().to_data().to_list()[1]
    assert second_row == pytest.approx([4 / 12, 5 / 12, 6 / 12, 7 / 12], abs=1e-7)


def test_range_int_truncates_the_step() -> None:
    ints = Tensor.zeros((2, 2), DEVICE, Int)

    def values(reinit: Reinitializer) -> Any:
        return reinit.map_int(ParamId.new(), ints).to_data().to_list()

    # (10 - 0) / 4 = 2.5 -> 2: 0, 2, 4, 6 (Burn converts the f64 step to the int element type).
    assert values(Reinitializer().range_int(0, 10)) == [[0, 2], [4, 6]]
    # (-1 - 5) / 4 = -1.5 -> -1 (toward zero): 5, 4, 3, 2.
    assert values(Reinitializer().range_int(5, -1)) == [[5, 4], [3, 2]]
    # range() truncates the bounds for ints: (2.9, 9.9) -> (2, 9), step 7 / 4 -> 1.
    assert values(Reinitializer().range(2.9, 9.9)) == [[2, 3], [4, 5]]


def test_random_float_is_the_stdrng_stream_restarted_per_tensor() -> None:
    out = Reinitializer().random_float(1234, -0.5, 0.5).apply(two())
    stream = _uniform_from_words(_stdrng_u64(1234, 12), -0.5, 0.5)
    np.testing.assert_array_equal(out.weight.val().to_numpy(), stream.astype(np.float32).reshape(3, 4))
    # Every tensor starts the stream again: the bias is the weight's first five values.
    np.testing.assert_array_equal(out.bias.val().to_numpy(), stream[:5].astype(np.float32))


def test_random_properties() -> None:
    big = Two(Param(Tensor.zeros((300, 200), DEVICE)), Param(Tensor.zeros((7,), DEVICE)))
    a = Reinitializer().random_float(5, 2.0, 3.0).apply(big).weight.val().to_numpy()
    b = Reinitializer().random_float(5, 2.0, 3.0).apply(big).weight.val().to_numpy()
    c = Reinitializer().random_float(6, 2.0, 3.0).apply(big).weight.val().to_numpy()
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    assert a.shape == (300, 200) and a.min() >= 2.0 and a.max() <= 3.0
    assert abs(a.mean() - 2.5) < 0.005 and abs(a.var() - 1 / 12) < 0.002
    # Ten equal bins, each within 5 standard deviations of n / 10.
    counts = np.histogram(a, bins=10, range=(2.0, 3.0))[0]
    assert np.all(np.abs(counts - 6000) < 5 * np.sqrt(6000 * 0.9))


def test_random_int_truncates_uniform_draws() -> None:
    ints = Tensor.zeros((4, 25), DEVICE, Int)
    got = Reinitializer().random_int(77, -3, 4).map_int(ParamId.new(), ints).to_numpy()
    draws = _uniform_from_words(_stdrng_u64(77, 100), -3.0, 4.0)
    np.testing.assert_array_equal(got.reshape(-1), np.trunc(draws).astype(np.int64))
    assert got.dtype == np.int64 and got.min() >= -2 and got.max() <= 3  # -3.x truncates to -2


def test_ids_flags_and_running_states() -> None:
    norm = BatchNormConfig(3).init(DEVICE)
    frozen = two()
    frozen = Two(frozen.weight.set_require_grad(False), frozen.bias)
    out = Reinitializer().constant(4.0).apply(norm)
    assert out.gamma.id == norm.gamma.id and out.beta.id == norm.beta.id
    # Running statistics are float tensors of the module too.
    assert out.running_mean.value().to_data().to_list() == [4.0] * 3
    assert out.running_var.value().to_data().to_list() == [4.0] * 3
    # The original module is untouched.
    assert norm.running_var.value().to_data().to_list() == [1.0] * 3
    again = Reinitializer().constant(1.0).apply(frozen)
    assert not again.weight.is_require_grad() and again.bias.is_require_grad()


def test_works_on_autodiff_parameters_and_with_map() -> None:
    ad = Autodiff[NdArray].device()
    layer = LinearConfig(2, 3).init(ad)
    out = layer.map(Reinitializer().range_float(0.0, 6.0))
    assert out.weight.val().device().is_autodiff and out.weight.is_require_grad()
    assert out.weight.val().to_data().to_list() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    grads = out.weight.val().sum().backward()
    grad = out.weight.val().grad(grads)
    assert grad is not None and grad.to_data().to_list() == [[1.0] * 3] * 2


def test_builder_is_immutable_and_shows_its_rules() -> None:
    base = Reinitializer()
    changed = base.random(3, -1.5, 2.5)
    assert repr(base) == "Reinitializer(float=constant(0.0), int=constant(0))"
    assert repr(changed) == "Reinitializer(float=random(seed=3, -1.5, 2.5), int=random(seed=3, -1, 2))"
    assert repr(base.range_int(1, 9)) == "Reinitializer(float=constant(0.0), int=range(1, 9))"


def test_bad_arguments_raise() -> None:
    with pytest.raises(ArgumentError, match=r"random_float: seed must be an int in \[0, 2\*\*64\), found -1"):
        Reinitializer().random_float(-1, 0.0, 1.0)
    with pytest.raises(ArgumentError, match="range_float: max must be a finite number, found inf"):
        Reinitializer().range_float(0.0, float("inf"))
    with pytest.raises(ArgumentError, match=r"range_int: min must be an int in the i64 range, found 1\.5"):
        Reinitializer().range_int(1.5, 3)  # type: ignore[arg-type]
    with pytest.raises(ArgumentError, match="constant: value must be a finite number, found nan"):
        Reinitializer().constant(float("nan"))
    # As in Burn, an empty range is refused when values are drawn for a tensor.
    with pytest.raises(ArgumentError, match=r"random_float: needs min < max, found min=1.0, max=1.0"):
        Reinitializer().random_float(0, 1.0, 1.0).apply(two())
    with pytest.raises(ArgumentError, match=r"random_int: needs min < max, found min=0, max=0"):
        Reinitializer().random(0, 0.1, 0.9).map_int(ParamId.new(), Tensor.zeros((2,), DEVICE, Int))
    with pytest.raises(KindError, match="map_int: expected an Int tensor, found kind Float"):
        Reinitializer().map_int(ParamId.new(), Tensor.zeros((2,), DEVICE))
    with pytest.raises(TypeError, match="apply: expected a Module, found int"):
        Reinitializer().apply(3)


def test_backend_generic_module_type_checks() -> None:
    # apply keeps the module's static type.
    def reset(model: Two) -> Two:
        return Reinitializer().constant(1.0).apply(model)

    assert isinstance(reset(two()), Two)
