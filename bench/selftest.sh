#!/usr/bin/env bash
# Tests the benchmark scripts without a GPU: bench.py's unit tests, a real run.sh on the sim
# device at tiny sizes (every program, including heat3d.c and cg.c), a fake binary that reports
# a cuda-style device time and a wrong result (the FAIL path and the device-time column), a
# staging comparison (--staging off/auto/on) of one case, the
# usage errors, and the SIZE_XL Himeno source under gcc.
#
#   bench/selftest.sh [YOSEGI_BINARY]     (default: target/debug/yosegi, built if missing)
set -u -o pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(dirname "$here")"
binary="${1:-$repo/target/debug/yosegi}"
if [ ! -x "$binary" ]; then
    (cd "$repo" && cargo build --quiet) || { echo "selftest: cannot build yosegi" >&2; exit 1; }
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "selftest: FAIL: $*" >&2; failures=$((failures + 1)); }

echo "== unit tests"
python3 "$here/test_bench.py" || fail "bench/test_bench.py"

echo "== run.sh --device sim --quick --tiny"
OUT="$work/sim" "$here/run.sh" --device sim --quick --tiny "$binary" > "$work/sim.txt" 2>&1
status=$?
cat "$work/sim.txt"
[ "$status" -eq 0 ] || fail "run.sh on sim exited $status"
for program in himeno jacobi2d diffusion1d diffusion_wide wide_stencil_f32 heat3d cg matmul_vec row_scan; do
    grep -Eq "^\| $program \| [^|]+ \| [0-9]+ \| - \| [0-9.]+ \|.*\| PASS \|$" "$work/sim.txt" ||
        fail "no PASS row with a time for $program"
done
grep -q "| skipped (no reference" "$work/sim.txt" || fail "the no-reference case is not reported as skipped"
[ -s "$work/sim/results.json" ] || fail "no results.json"
python3 -c 'import json,sys; sys.path.insert(0, sys.argv[2]); import bench; rows=json.load(open(sys.argv[1]))["rows"]; sys.exit(0 if len(rows)==len(bench.size_set("tiny")) and all(r["runs"] for r in rows) else 1)' \
    "$work/sim/results.json" "$here" || fail "results.json does not hold a row with runs for each case of the tiny set"
ls "$work/sim/logs" | grep -q '^cg-8_2.run0.err$' || fail "no per-run log for cg"

echo "== run.sh --staging-compare on sim (one case)"
OUT="$work/compare" "$here/run.sh" --device sim --quick --tiny --staging-compare --only diffusion_wide "$binary" \
    > "$work/compare.txt" 2>&1
status=$?
cat "$work/compare.txt"
[ "$status" -eq 0 ] || fail "run.sh --staging-compare on sim exited $status"
grep -q '^| program | size | off ms/step | auto ms/step | on ms/step |' "$work/compare.txt" ||
    fail "no staging comparison table"
grep -Eq '^\| diffusion_wide \| 300 \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \|.*\| PASS \|$' \
    "$work/compare.txt" || fail "no comparison row with three times and PASS for diffusion_wide"
for mode in off auto on; do
    grep -q -- "--staging $mode" "$work/compare/logs/diffusion_wide-300.staging_$mode.run0.err" ||
        fail "the --staging $mode run did not pass the flag"
done

echo "== fake cuda-style binary with a wrong result"
cat > "$work/fake-yosegi" <<'FAKE'
#!/bin/sh
echo "diffusion1d: 64 points, 10 steps, dt 1e-4"
echo "heat: 0.1234, u(1/3): 0.5"
cat >&2 <<'STATS'
=== yosegi stats ===
kernel                                     launches      time (ms)
main_l40                                         10          5.000
host->device bytes                                           1024
kernel time on the device (ms)                              2.000
STATS
FAKE
chmod +x "$work/fake-yosegi"
OUT="$work/fake" "$here/run.sh" --device sim --quick --tiny --only diffusion1d-64 "$work/fake-yosegi" > "$work/fake.txt" 2>&1
status=$?
cat "$work/fake.txt"
[ "$status" -eq 1 ] || fail "a wrong result should make run.sh exit 1 (got $status)"
# 2 ms of device time over 10 steps; 62 points x 16 bytes per step in 0.2 ms.
grep -Eq '^\| diffusion1d \| 64 \| 10 \| 0\.2000 \| 0\.5000 \|.*\| FAIL \(' "$work/fake.txt" ||
    fail "the fake run should show 0.2 ms/step device time and FAIL"

echo "== scaling_curves.py on sim stats"
mkdir -p "$work/curves/jacobi2d"
YOSEGI_CACHE_DIR="$work/cache" YOSEGI_STATS_DIR="$work/curves/jacobi2d" "$binary" run --device sim -w "$repo/examples/jacobi2d.c" -- 128 3 >/dev/null 2>&1 \
    || fail "jacobi2d on sim with YOSEGI_STATS_DIR"
printf '| case | GPUs | time (s) | speed-up | peer bytes | split / whole launches | check |\n|---|---|---|---|---|---|---|\n| jacobi2d | 1 | 2.0 | 1.00x | 0 | 0/0 | PASS |\n| jacobi2d | 2 | 1.2 | 1.67x | 0 | 6/0 | PASS |\n' >"$work/results.md"
python3 "$here/scaling_curves.py" "$work/curves" --measured "$work/results.md" >"$work/curves.txt" 2>&1 || fail "scaling_curves.py exited $?"
cat "$work/curves.txt"
grep -q '^| jacobi2d | 1.00 [0-9.]* [0-9.]* [0-9.]* [0-9.]* [0-9.]* [0-9.]* [0-9.]* | [1-8] | 1: 1.00x, 2: 1.67x |$' "$work/curves.txt" || fail "scaling_curves.py: no jacobi2d row with eight points and the measured ones"
grep -q '<polyline' "$work/curves/scaling.svg" || fail "scaling_curves.py drew no curve"

echo "== usage errors"
"$here/run.sh" > /dev/null 2>&1; [ $? -eq 2 ] || fail "run.sh without a binary should exit 2"
"$here/run.sh" --device tpu "$binary" > /dev/null 2>&1; [ $? -eq 2 ] || fail "a bad --device should exit 2"
OUT="$work/only" "$here/run.sh" --device sim --tiny --only nosuch "$binary" > /dev/null 2>&1
[ $? -ne 0 ] || fail "--only with no match should fail"

echo "== Himeno SIZE_XL source"
python3 "$here/bench.py" --print-xl-source "$binary" > "$work/himeno_xl.c" || fail "no XL source"
gcc -std=gnu11 -fsyntax-only -w -DSIZE_XL "$work/himeno_xl.c" || fail "the XL source does not compile"

if [ "$failures" -eq 0 ]; then
    echo "selftest: all passed"
else
    echo "selftest: $failures failure(s)"
    exit 1
fi
