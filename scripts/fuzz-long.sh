#!/usr/bin/env bash
# A long run of the front end's fuzzer (`yosegi-fuzz`) built with overflow checks: a million
# inputs over the repository's corpus (and any extra corpus folders given), at the lowest CPU
# priority so that the machine stays usable. CI runs 15,000 inputs of the same kind (.ci/run).
#
# Usage:
#   scripts/fuzz-long.sh [options] [CORPUS...]
#     CORPUS        extra .c files or folders (e.g. a clone of OpenACCV-V's Tests/)
#   --inputs N      inputs to compile (default 1000000)
#   --seed S        the run's seed (default 1); input k depends only on the seed and the corpus
#   --jobs J        worker processes (default: the number of CPUs)
#   --out DIR       where findings go (default fuzz-long-out)
#
# Builds `cargo build --profile fuzz --bin yosegi-fuzz` first (release speed, overflow checks
# and debug assertions on), then runs it under `nice -n 19`. It ends with the fuzzer's summary,
# `fuzz: N inputs, P panics, H hangs, C crashes`, and exits 1 when anything was found: each
# finding is DIR/panic-K.c, hang-K.c or crash-K.c (the preprocessed input) with a .txt report
# (message, mutations). Replay one with `target/fuzz/yosegi-fuzz --replay DIR/panic-K.c`.
# A million inputs took 58 minutes on two cores (288 inputs a second, 2026-12-03, seed 5: 0
# panics, 0 hangs, 0 crashes), proportionally less on more.
set -euo pipefail
cd "$(dirname "$0")/.."
inputs=1000000
seed=1
jobs=()
out=fuzz-long-out
corpus=()
while [ $# -gt 0 ]; do
    case "$1" in
        --inputs) inputs="$2"; shift 2 ;;
        --seed) seed="$2"; shift 2 ;;
        --jobs) jobs=(--jobs "$2"); shift 2 ;;
        --out) out="$2"; shift 2 ;;
        -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        -*) echo "fuzz-long.sh: unknown option $1" >&2; exit 2 ;;
        *) corpus+=("$1"); shift ;;
    esac
done
cargo build --profile fuzz --bin yosegi-fuzz
mkdir -p "$out"
started=$(date +%s)
status=0
nice -n 19 "${CARGO_TARGET_DIR:-target}/fuzz/yosegi-fuzz" --inputs "$inputs" --seed "$seed" ${jobs[@]+"${jobs[@]}"} --out "$out" \
    ${corpus[@]+"${corpus[@]}"} || status=$?
echo "fuzz-long.sh: $(( $(date +%s) - started )) s; findings (if any) in $out"
exit "$status"
