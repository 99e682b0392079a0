"""A tour of ferrum's tensor API: creation, kinds, operations, views, NumPy.

Run with `python examples/tensors.py`.
"""

import numpy as np
from ferrum import D1, D2, D3, Bool, Distribution, Int, Tensor, activation
from ferrum.backend import NdArray

B = NdArray
device = B.device()
B.seed(0)

# Creation: from nested lists (rank and kind come from the data), shapes, distributions.
a: Tensor[B, D2] = Tensor.from_data([[1.0, 2.0], [3.0, 4.0]], device)
labels: Tensor[B, D1, Int] = Tensor.from_data([0, 2, 1], device)
noise = Tensor.random((2, 2), Distribution.Normal(0.0, 1.0), device)
print("a =", a)
print("labels =", labels.to_data().to_list(), "| noise dims:", noise.dims())

# Arithmetic broadcasts between equal ranks over size-1 dims.
row = Tensor.from_data([[10.0, 20.0]], device)
print("a + row =", (a + row).to_data().to_list())
print("a @ a   =", (a @ a).to_data().to_list())

# Reductions over one dim keep it, as in Burn.
print("sum_dim(1) =", a.sum_dim(1).to_data().to_list(), "| mean =", a.mean().into_scalar())

# Views copy nothing: transpose, slicing, reshape of contiguous data.
t = a.transpose()
print("transposed =", t.to_data().to_list(), "| contiguous:", t.is_contiguous())
print("a[:, 1:2] =", a[:, 1:2].to_data().to_list())
cube: Tensor[B, D3] = Tensor.arange(0, 24, device).float().reshape((2, 3, 4))
print("cube.swap_dims(0, 2).dims() =", cube.swap_dims(0, 2).dims())

# Bool and Int kinds: comparisons, masks, indices.
mask: Tensor[B, D2, Bool] = a.greater_elem(2.0)
print("mask =", mask.to_data().to_list(), "| filled =", a.mask_fill(mask, 0.0).to_data().to_list())
print("argmax(1) =", a.argmax(1).to_data().to_list())

# Activations are fused engine kernels.
probs = activation.softmax(a, 1)
print("softmax rows sum to", probs.sum_dim(1).to_data().to_list())

# NumPy interop: to_numpy is a read-only view (no copy); from_numpy copies.
arr = a.to_numpy()
print("numpy view:", arr, "writeable:", arr.flags.writeable)
back: Tensor[B, D2] = Tensor.from_numpy(np.arange(6, dtype=np.float64).reshape(2, 3).T, device)
print("from a strided float64 array:", back.to_data().to_list(), back.dtype)
