#!/usr/bin/env bash
# Runs the fuzz targets with libFuzzer (needs the nightly toolchain; installs
# cargo-fuzz if missing). Usage: fuzz/run.sh [SECONDS_PER_TARGET] [TARGET...]
# Seeds are read from fuzz/seeds/<target>; the growing corpus and any crash
# artifacts go to fuzz/corpus and fuzz/artifacts (not committed). A crash becomes a
# regression test in tests/tests/fuzz_smoke.rs.
set -euo pipefail
cd "$(dirname "$0")"
secs="${1:-600}"
shift || true
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(asm reader emu config prof sweep slurm model compare)
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked
for t in "${targets[@]}"; do
    mkdir -p "corpus/$t"
    cp -n seeds/"$t"/* "corpus/$t/" 2>/dev/null || true
    cargo +nightly fuzz run -O "$t" "corpus/$t" -- \
        -max_total_time="$secs" -rss_limit_mb="${RSS_MB:-2048}" -timeout=20 -print_final_stats=1
done
