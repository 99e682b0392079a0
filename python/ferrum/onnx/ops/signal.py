"""Spectral ops: DFT and STFT (since opset 17), MelWeightMatrix (since opset 17).

ONNX stores a complex tensor as a real one with a trailing dim of 2 (real,
imaginary); a real signal has a trailing dim of 1. ferrum has no FFT: a
signal that is not tracked by autodiff goes through NumPy's FFT (in its own
precision, as ONNX's reference does, so the results agree to the last bit);
a tracked one is transformed by matmuls with ``[n, L]`` cosine and sine
matrices built in NumPy (f64, with the phase ``k * n`` reduced modulo ``L``),
``O(n L)`` per row rather than ``O(L log L)``, but on engine ops, so
gradients flow through it. MelWeightMatrix depends only on its scalar inputs and is built in
NumPy, following ONNX's reference implementation.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ferrum._ferrum import Device, DType, Float, KindError, Tensor
from ferrum.backend import NdArray
from ferrum.onnx.dtypes import compute_dtype, numpy_dtype
from ferrum.onnx.ops._util import AnyTensor, IntArg, check_size, ints
from ferrum.onnx.ops.registry import op

__all__ = ["dft", "mel_weight_matrix", "stft"]


def _one_int(value: IntArg, name: str, what: str) -> int | None:
    found = ints(value)
    if found is None:
        return None
    if len(found) != 1:
        raise ValueError(f"{name}: {what} must be one integer, found {found}")
    return found[0]


def _one_float(value: Any, name: str, what: str) -> float:
    array = np.asarray(value.to_numpy() if isinstance(value, Tensor) else value, dtype=np.float64)
    if array.size != 1:
        raise ValueError(f"{name}: {what} must be one number, found shape {list(array.shape)}")
    return float(array.reshape(-1)[0])


def _phases(n_in: int, n_out: int, length: int) -> np.ndarray[Any, Any]:
    """``2 pi (k n mod L) / L`` as an ``[n_in, n_out]`` f64 matrix (exact integer reduction first)."""
    k = np.arange(n_out, dtype=np.int64)
    n = np.arange(n_in, dtype=np.int64)
    return 2.0 * np.pi * (np.outer(n, k) % length).astype(np.float64) / length


def _rows(x: AnyTensor, axis: int) -> tuple[AnyTensor, list[int], list[int]]:
    """``x`` with ``axis`` moved last and flattened to ``[rows, n]``; the moved dims and the permutation."""
    rank = x.rank()
    order = [d for d in range(rank) if d != axis] + [axis]
    moved = x.permute(order) if axis != rank - 1 else x
    dims = list(moved.dims())
    return moved.reshape((-1, dims[-1])), dims, order


def _unrows(flat: AnyTensor, dims: list[int], order: list[int], n_out: int) -> AnyTensor:
    out = flat.reshape((*dims[:-1], n_out))
    if order == sorted(order):
        return out
    return out.permute([order.index(d) for d in range(len(order))])


def _matrix(values: np.ndarray[Any, Any], like: AnyTensor) -> AnyTensor:
    return Tensor.from_numpy(np.ascontiguousarray(values), like.device(), dtype=like.dtype)


def _transform(x: AnyTensor, axis: int, length: int, inverse: bool, onesided: bool) -> AnyTensor:
    """The DFT of ``x`` (``[..., 1 or 2]``, already checked) along ``axis``, ``length`` points."""
    if not x.is_require_grad():
        return _numpy_transform(x, axis, length, inverse, onesided)
    if x.dtype != DType.F64:
        # Summed in f64: an f32 matmul's rounding (1e-6 of the largest bin) would swamp small bins.
        return _matmul_transform(x.cast(DType.F64), axis, length, inverse, onesided).cast(x.dtype)
    return _matmul_transform(x, axis, length, inverse, onesided)


def _numpy_transform(x: AnyTensor, axis: int, length: int, inverse: bool, onesided: bool) -> AnyTensor:
    """The DFT through NumPy's FFT in the signal's precision, as ONNX's reference computes it."""
    array = np.asarray(x.to_numpy())
    signal = array[..., 0] if array.shape[-1] == 1 else array[..., 0] + 1j * array[..., 1]
    if inverse and onesided:
        real = np.fft.irfft(signal, n=length, axis=axis)
        return Tensor.from_numpy(np.ascontiguousarray(real[..., None]), x.device(), dtype=x.dtype)
    spectrum = (
        np.fft.ifft(signal, n=length, axis=axis) if inverse else np.fft.fft(signal, n=length, axis=axis)
    )
    if onesided:
        spectrum = np.take(spectrum, np.arange(length // 2 + 1), axis=axis)
    out = np.stack([spectrum.real, spectrum.imag], axis=-1).astype(array.dtype)
    return Tensor.from_numpy(out, x.device(), dtype=x.dtype)


def _matmul_transform(x: AnyTensor, axis: int, length: int, inverse: bool, onesided: bool) -> AnyTensor:
    """The DFT as matmuls with cosine and sine matrices: slower than an FFT, but differentiable."""
    parts = x.rank() - 1
    real = x.narrow(parts, 0, 1).squeeze_dim(parts)
    imag = x.narrow(parts, 1, 1).squeeze_dim(parts) if x.dims()[-1] == 2 else None
    n_in = min(int(real.dims()[axis]), length)
    # A longer input is cut to `length`, a shorter one zero-padded: the padded rows add nothing.
    real = real.narrow(axis, 0, n_in)
    imag = imag.narrow(axis, 0, n_in) if imag is not None else None
    real_rows, dims, order = _rows(real, axis)
    imag_rows = _rows(imag, axis)[0] if imag is not None else None
    if inverse and onesided:
        return _irfft(real_rows, imag_rows, dims, order, length, n_in)
    n_out = length // 2 + 1 if onesided else length
    theta = _phases(n_in, n_out, length)
    scale = 1.0 / length if inverse else 1.0
    # forward: (a + ib)(cos - i sin); inverse: (a + ib)(cos + i sin) / L
    sign = -1.0 if inverse else 1.0
    cos = _matrix(np.cos(theta) * scale, real_rows)
    sin = _matrix(np.sin(theta) * scale * sign, real_rows)
    out_real = real_rows @ cos
    out_imag = -(real_rows @ sin)
    if imag_rows is not None:
        out_real = out_real + imag_rows @ sin
        out_imag = out_imag + imag_rows @ cos
    re = _unrows(out_real, dims, order, n_out)
    im = _unrows(out_imag, dims, order, n_out)
    return Tensor.stack([re, im], re.rank())


def _irfft(
    real: AnyTensor, imag: AnyTensor | None, dims: list[int], order: list[int], length: int, n_in: int
) -> AnyTensor:
    """The real inverse of a one-sided spectrum, as NumPy's ``irfft``: bins past ``L // 2`` mirrored."""
    bins = min(n_in, length // 2 + 1)
    real = real.narrow(1, 0, bins)
    imag = imag.narrow(1, 0, bins) if imag is not None else None
    theta = _phases(length, bins, length).T
    # Every bin but 0 (and L/2 for an even L) stands for itself and its conjugate mirror.
    weight = np.full(bins, 2.0)
    weight[0] = 1.0
    if length % 2 == 0 and bins == length // 2 + 1:
        weight[-1] = 1.0
    weight = weight[:, None] / length
    out = real @ _matrix(np.cos(theta) * weight, real)
    if imag is not None:
        out = out - imag @ _matrix(np.sin(theta) * weight, real)
    result = _unrows(out, dims, order, length)
    return result.unsqueeze_dims([result.rank()])


def _check_signal(name: str, x: AnyTensor) -> None:
    if x.kind is not Float:
        raise KindError(f"{name}: the signal must be a float tensor, found {x.kind.__name__}")
    if x.rank() < 2 or x.dims()[-1] not in (1, 2):
        raise ValueError(
            f"{name}: the signal's last dim must be 1 (real) or 2 (complex), found shape {list(x.dims())}"
        )


@op("DFT", static=(None, "dft_length", "axis"), since=17)
def dft(
    x: AnyTensor,
    dft_length: IntArg = None,
    axis: IntArg = None,
    inverse: int = 0,
    onesided: int = 0,
    opset: int = 20,
) -> AnyTensor:
    """DFT: the discrete Fourier transform of ``x`` along ``axis``, complex out (trailing dim 2).

    ``x`` is ``[..., 1]`` (real) or ``[..., 2]`` (complex). ``dft_length``
    (default: the axis' size) cuts or zero-pads the signal; ``inverse``
    gives the inverse transform, scaled by ``1 / dft_length``. ``onesided``
    keeps the ``dft_length // 2 + 1`` non-redundant bins of a forward
    transform; with ``inverse`` it reads a one-sided spectrum and gives the
    real signal (trailing dim 1, length ``2 * (n - 1)`` by default), as
    NumPy's ``irfft``. ``axis`` is an attribute (default 1) before opset 20
    and an input (default -2) since; it may not be the trailing dim.
    Computed as matmuls with cosine and sine matrices (see the module).

    Example:
        >>> from ferrum.backend import NdArray
        >>> x = Tensor.from_numpy(np.array([[[1.0], [0.0], [0.0], [0.0]]], np.float32), NdArray.device())
        >>> dft(x, axis=1).to_numpy()[0, :, 0].tolist()
        [1.0, 1.0, 1.0, 1.0]
    """
    _check_signal("DFT", x)
    rank = x.rank()
    found = _one_int(axis, "DFT", "axis")
    a = found if found is not None else (-2 if opset >= 20 else 1)
    if not (-rank <= a <= -2 or 0 <= a <= rank - 2):
        raise ValueError(f"DFT: axis must be in [{-rank}, -2] or [0, {rank - 2}], found {a}")
    a = a + rank if a < 0 else a
    length = _one_int(dft_length, "DFT", "dft_length")
    n = int(x.dims()[a])
    if length is None:
        length = 2 * (n - 1) if inverse and onesided else n
    if length < 1:
        raise ValueError(f"DFT: dft_length must be at least 1, found {length}")
    check_size([length, math.prod(x.dims()) // max(n, 1)], "DFT")
    return _transform(x, a, length, bool(inverse), bool(onesided))


@op("STFT", static=(None, "frame_step", None, "frame_length"), since=17)
def stft(
    signal: AnyTensor,
    window: AnyTensor | None = None,
    frame_step: IntArg = None,
    frame_length: IntArg = None,
    onesided: int = 1,
) -> AnyTensor:
    """STFT: the DFT of each ``frame_length`` frame of ``[batch, length, 1 or 2]``, ``frame_step`` apart.

    Gives ``[batch, frames, bins, 2]``: ``frames = 1 + (length - frame_length)
    // frame_step``, ``bins = frame_length // 2 + 1`` when ``onesided`` (the
    default) else ``frame_length``. Each frame is multiplied by ``window``
    (rank 1, default all ones) first; ``frame_length`` defaults to the
    window's length, and must equal it when both are given.
    """
    _check_signal("STFT", signal)
    if signal.rank() != 3:
        raise ValueError(
            f"STFT: the signal must be [batch, length, 1 or 2], found shape {list(signal.dims())}"
        )
    step = _one_int(frame_step, "STFT", "frame_step")
    if step is None or step < 1:
        raise ValueError(f"STFT: frame_step must be a positive integer, found {step}")
    size = _one_int(frame_length, "STFT", "frame_length")
    if window is not None:
        if window.rank() != 1 or (size is not None and window.dims()[0] != size):
            raise ValueError(
                f"STFT: window must be rank 1 of frame_length {size}, found shape {list(window.dims())}"
            )
        size = int(window.dims()[0])
    length = int(signal.dims()[1])
    if size is None:
        size = length
    if not 1 <= size <= length:
        raise ValueError(f"STFT: frame_length must be in [1, {length}] (the signal's length), found {size}")
    # unfold: [batch, length, c] -> [batch, frames, c, size]
    frames: AnyTensor = signal.unfold(1, size, step)
    if window is not None:
        frames = frames * window.cast(signal.dtype).reshape((1, 1, 1, size))
    frames = frames.permute([0, 1, 3, 2])
    return _transform(frames, 2, size, False, bool(onesided))


@op(
    "MelWeightMatrix",
    static=("num_mel_bins", "dft_length", "sample_rate", "lower_edge_hertz", "upper_edge_hertz"),
    since=17,
)
def mel_weight_matrix(
    num_mel_bins: IntArg = None,
    dft_length: IntArg = None,
    sample_rate: IntArg = None,
    lower_edge_hertz: Any = None,
    upper_edge_hertz: Any = None,
    output_datatype: int = 1,
    device: Device[Any] | None = None,
) -> AnyTensor:
    """MelWeightMatrix: the ``[dft_length // 2 + 1, num_mel_bins]`` triangular mel filter bank.

    Multiplying a one-sided magnitude spectrum by it gives mel bands between
    ``lower_edge_hertz`` and ``upper_edge_hertz``. Built in NumPy as ONNX's
    reference builds it (mel points on ``2595 log10(1 + f / 700)``, rounded
    down to DFT bins), stored in ``output_datatype`` (f32 by default).
    """
    mels = _one_int(num_mel_bins, "MelWeightMatrix", "num_mel_bins")
    n_fft = _one_int(dft_length, "MelWeightMatrix", "dft_length")
    rate = _one_int(sample_rate, "MelWeightMatrix", "sample_rate")
    if mels is None or n_fft is None or rate is None or mels < 1 or n_fft < 1 or rate < 1:
        raise ValueError(
            "MelWeightMatrix: num_mel_bins, dft_length and sample_rate must be positive integers, "
            f"found {mels}, {n_fft}, {rate}"
        )
    low = _one_float(lower_edge_hertz, "MelWeightMatrix", "lower_edge_hertz")
    high = _one_float(upper_edge_hertz, "MelWeightMatrix", "upper_edge_hertz")
    if not 0.0 <= low < high:
        raise ValueError(
            f"MelWeightMatrix: needs 0 <= lower_edge_hertz < upper_edge_hertz, found {low}, {high}"
        )
    spectrum_bins = n_fft // 2 + 1
    check_size([spectrum_bins, mels], "MelWeightMatrix")
    points = np.arange(mels + 2, dtype=np.float64)
    low_mel = 2595 * np.log1p(low / 700) / np.log(10)
    high_mel = 2595 * np.log1p(high / 700) / np.log(10)
    # The reference divides by the number of points (mels + 2), not the number of gaps: kept for parity.
    hertz = 700 * np.expm1((points * (high_mel - low_mel) / (mels + 2) + low_mel) / 2595 * np.log(10))
    bins = (((n_fft + 1) * hertz) // rate).astype(np.int64)
    if bins[-2] >= spectrum_bins or bins[-1] > spectrum_bins:
        raise ValueError(
            f"MelWeightMatrix: upper_edge_hertz {high} is past the Nyquist frequency {rate / 2} "
            "of sample_rate"
        )
    out = np.zeros((spectrum_bins, mels), dtype=np.float64)
    for i in range(mels):
        left, center, right = int(bins[i]), int(bins[i + 1]), int(bins[i + 2])
        if center == left:
            out[center, i] = 1.0
        else:
            out[left : center + 1, i] = (np.arange(left, center + 1) - left) / (center - left)
        if right > center:
            out[center:right, i] = (right - np.arange(center, right)) / (right - center)
    on = device if device is not None else NdArray.device()
    with np.errstate(invalid="ignore"):
        array = out.astype(numpy_dtype(output_datatype, "MelWeightMatrix: "))
    array = compute_dtype(array)
    if array.dtype == np.float64:
        # from_numpy makes f32 unless told: an f64 output_datatype stays f64
        return Tensor.from_numpy(array, on, dtype=DType.F64)
    return Tensor.from_numpy(array, on)
