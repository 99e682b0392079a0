#!/usr/bin/env bash
# Every test of the project: the engine's cargo tests, then ferrum installed
# into a fresh virtual environment with its test dependencies, its pytest
# suite, type checks (mypy --strict, stubs against the binary), lint, and the
# documentation site built with warnings as errors.
set -euo pipefail
cd "$(dirname "$0")/.."

cargo test --workspace --exclude ferrum-py
cargo clippy --workspace --all-targets -- -D warnings

venv="${FERRUM_TEST_VENV:-.venv-test}"
python3 -m venv "$venv"
# shellcheck disable=SC1091
. "$venv/bin/activate"
python -m pip install --quiet --upgrade pip
python -m pip install --quiet ".[test,docs]"

python -m pytest
python -m mypy --strict
python scripts/stubtest_native.py ferrum._ferrum --allowlist stubtest-allowlist.txt
python -m ruff check python tests examples benches
# The site is read from the installed package; strict: a warning (a broken
# link, a docstring that does not parse) fails the build. Output in a temp dir.
site="$(mktemp -d)"
NO_MKDOCS_2_WARNING=1 python -m mkdocs build --strict --site-dir "$site"
rm -rf "$site"
