#!/usr/bin/env python3
"""Check DLPack both ways against PyTorch (needs torch; not run by the tests, which never import it).

    /path/to/torch-venv/bin/python scripts/check_dlpack_torch.py [site-packages of a venv with ferrum]

``Tensor.from_dlpack(torch_tensor, device)`` must share the tensor's memory (torch's later writes
are seen; strided and negative-stride views keep their values; every dtype ferrum shares comes
back as itself), survive the torch tensor's deletion, and refuse bfloat16 with a clear error;
``torch.from_dlpack(ferrum_tensor)`` must share ferrum's buffer read-only. Prints one line per
check and exits non-zero on the first failure.
"""

from __future__ import annotations

import gc
import site
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
site.addsitedir(sys.argv[1] if len(sys.argv) > 1 else str(REPO / ".venv/lib/python3.11/site-packages"))

import numpy as np  # noqa: E402
import torch  # noqa: E402
from ferrum import ArgumentError, DType, Tensor  # noqa: E402
from ferrum.backend import NdArray  # noqa: E402

DEVICE = NdArray.device()


def check(name: str, ok: bool) -> None:
    print(f"{'ok  ' if ok else 'FAIL'} {name}")
    if not ok:
        sys.exit(1)


def main() -> None:
    x = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    t = Tensor.from_dlpack(x, DEVICE)
    x[0, 0] = 100.0
    check("torch's writes are seen (memory shared)", t.to_data().to_list()[0][0] == 100.0)
    check("ferrum's NumPy view is torch's memory", t.to_numpy().ctypes.data == x.data_ptr())
    flipped = Tensor.from_dlpack(x.t(), DEVICE)
    check("a transposed torch view keeps its values", np.array_equal(flipped.to_numpy(), x.t().numpy()))
    # torch exports no negative strides; a narrowed, stepped view is the strided case it has.
    stepped = x[1:, ::2]
    got = Tensor.from_dlpack(stepped, DEVICE).to_numpy()
    check("a stepped torch view keeps its values", np.array_equal(got, stepped.numpy()))
    expected = x.numpy().copy()
    del x, stepped
    gc.collect()
    check("the tensor outlives the torch tensor", np.array_equal(t.to_numpy(), expected))

    for dtype, want in [
        (torch.float64, DType.F64),
        (torch.float16, DType.F16),
        (torch.int64, DType.I64),
        (torch.int32, DType.I32),
        (torch.uint8, DType.U8),
        (torch.bool, DType.Bool),
    ]:
        src = (torch.arange(6) % 2).to(dtype)
        got = Tensor.from_dlpack(src, DEVICE)
        same = got.dtype == want and got.to_numpy().ctypes.data == src.data_ptr()
        check(f"{dtype} is shared as {want}", same and np.array_equal(got.to_numpy(), src.numpy()))

    try:
        Tensor.from_dlpack(torch.ones(2, dtype=torch.bfloat16), DEVICE)
        check("bfloat16 is refused", False)
    except ArgumentError as e:
        check(f"bfloat16 is refused: {e}", "bf16: cast to f32 first" in str(e))

    f = Tensor.from_data([[1.0, 2.0], [3.0, 4.0]], DEVICE)
    back = torch.from_dlpack(f)
    check("torch reads ferrum's buffer without a copy", back.data_ptr() == f.to_numpy().ctypes.data)
    check("and the values", back.tolist() == [[1.0, 2.0], [3.0, 4.0]])


if __name__ == "__main__":
    main()
