"""``python -m examples.named_tensor``: Burn's named-tensor example, dims named by the types.

Options: ``--smoke`` (batch 2, sequence 3, d_model 4: the same program on
small tensors).
"""

from __future__ import annotations

from ferrum.backend import NdArray

from ..common.cli import example_parser
from .lib import run


def main() -> None:
    parser = example_parser("named_tensor", __doc__, smoke=True)
    args = parser.parse_args()
    if args.smoke:
        run(NdArray.device(), batch_size=2, seq_length=3, d_model=4)
    else:
        run(NdArray.device())


if __name__ == "__main__":
    main()
