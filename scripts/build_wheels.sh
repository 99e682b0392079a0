#!/usr/bin/env bash
# Builds the release wheel as the package registry wants it for Linux: manylinux2014
# (glibc 2.17, so Ubuntu 20.04, Debian 11 and RHEL 8 can install it), linked through zig
# so no manylinux container is needed, stripped; then installs it into a fresh venv and
# runs the main example with it. The SIMD kernels are chosen at run time, so the wheel is
# built for the architecture's baseline (no target-cpu flags).
#
#   bash scripts/build_wheels.sh                 # x86_64, into dist/
#   TARGET=aarch64-unknown-linux-gnu bash scripts/build_wheels.sh   # cross-built, not run
set -euo pipefail
cd "$(dirname "$0")/.."

target="${TARGET:-}"
venv="${FERRUM_WHEEL_VENV:-.venv-wheel}"
python3 -m venv "$venv.build"
# shellcheck disable=SC1091
. "$venv.build/bin/activate"
python -m pip install --quiet --upgrade pip
python -m pip install --quiet "maturin>=1.7,<2" ziglang
args=(--release --strip --zig --compatibility manylinux2014 --out dist)
if [[ -n "$target" ]]; then
    rustup target add "$target"
    args+=(--target "$target")
fi
maturin build "${args[@]}"
deactivate

if [[ -n "$target" ]]; then
    ls -l dist
    exit 0
fi
wheel="$(ls -t dist/ferrum_dl-*manylinux2014_x86_64*.whl | head -n 1)"
echo "built $wheel ($(du -h "$wheel" | cut -f1))"
rm -rf "$venv"
python3 -m venv "$venv"
# shellcheck disable=SC1091
. "$venv/bin/activate"
python -m pip install --quiet --upgrade pip
python -m pip install --quiet "$wheel[plot,progress]"
python -c "import ferrum; print('ferrum', ferrum.__version__, 'from', ferrum.__file__)"
python -m examples.guide
