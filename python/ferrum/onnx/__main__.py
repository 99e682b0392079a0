"""``python -m ferrum.onnx MODEL.onnx OUT_DIR [--name NAME]``: a typed ferrum module and its weights."""

from __future__ import annotations

import argparse
import sys

from ferrum.extras import run_main
from ferrum.onnx.codegen import generate
from ferrum.onnx.errors import OnnxError


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m ferrum.onnx",
        description="Generate a typed ferrum Module (NAME.py) and its weights (NAME.mpk) from an ONNX model.",
    )
    parser.add_argument("model", help="the .onnx file")
    parser.add_argument("out_dir", help="the directory to write NAME.py and NAME.mpk into")
    parser.add_argument("--name", help="module name (default: the model file's name)")
    args = parser.parse_args(argv)
    try:
        files = generate(args.model, args.out_dir, args.name)
    except OnnxError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"wrote {files.source} (class {files.class_name}) and {files.weights}")
    return 0


if __name__ == "__main__":
    run_main(main)
