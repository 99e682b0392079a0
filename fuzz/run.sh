#!/usr/bin/env bash
# The long fuzzing campaign, run by hand (the test command runs a short, bounded one:
# rust/ferrum-core/tests/fuzz_records.rs). Needs cargo-fuzz (`cargo install cargo-fuzz`);
# RUSTC_BOOTSTRAP=1 lets the stable toolchain build with libFuzzer's instrumentation.
#
#   bash fuzz/run.sh [SECONDS_PER_TARGET] [TARGET...]
#
# Runs each target (default: all) for SECONDS (default 1800) on one core at the lowest
# priority. New inputs go to fuzz/work/<target>, crashers to fuzz/artifacts/<target>: copy
# a crasher to fuzz/regressions/<target>/ once fixed, so every test run replays it.
set -euo pipefail
cd "$(dirname "$0")"
seconds="${1:-1800}"
shift || true
export RUSTC_BOOTSTRAP=1
cargo fuzz build -O
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    mapfile -t targets < <(cargo fuzz list)
fi
status=0
for target in "${targets[@]}"; do
    mkdir -p "work/$target" "corpus/$target" "regressions/$target"
    echo "== $target: ${seconds}s"
    nice -n 19 cargo fuzz run -O "$target" "work/$target" "corpus/$target" "regressions/$target" -- \
        -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=16384 -print_final_stats=1 \
        >"work/$target.log" 2>&1 || status=1
    grep -E "^(stat::number_of_executed_units|stat::peak_rss_mb|Done|==[0-9]+== ERROR|SUMMARY)" "work/$target.log" || true
done
exit $status
