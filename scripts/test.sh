#!/usr/bin/env bash
# Every test of the project: the engine's cargo tests, then ferrum installed
# into a fresh virtual environment with its test dependencies, its pytest
# suite, type checks (mypy --strict, stubs against the binary) and lint.
set -euo pipefail
cd "$(dirname "$0")/.."

cargo test --workspace --exclude ferrum-py
cargo clippy --workspace --all-targets -- -D warnings

venv="${FERRUM_TEST_VENV:-.venv-test}"
python3 -m venv "$venv"
# shellcheck disable=SC1091
. "$venv/bin/activate"
python -m pip install --quiet --upgrade pip
python -m pip install --quiet ".[test]"

python -m pytest
python -m mypy --strict
python -m mypy.stubtest ferrum._ferrum --allowlist stubtest-allowlist.txt
python -m ruff check python tests examples benches
