#!/usr/bin/env bash
# The first run against the second for a Himeno OpenACC code measured by its own timer (issue
# "the first run as fast as the tenth"): the code's folder is built by its own Makefile with
# `make CC=yosegi-cc` and run with an empty kernel cache (first) and again (warm); then the
# same source through `yosegi run` (first, warm, and warm with --stats=json). Each run prints
# two MFLOPS figures: the code's 3-iteration phase, then its ~20 s phase sized from the first.
#
# Usage: bench/first-run-himeno.sh SRC_DIR BIN_DIR
#   SRC_DIR  a folder with the code's Makefile, himeno_C.c and himeno_C.h (for example
#            ENCCS/OpenACC-CUDA-intermediate's solution/C with himeno_C_v03.c as himeno_C.c);
#            it is copied, not modified
#   BIN_DIR  the folder holding yosegi and yosegi-cc (and libyosegi_rt.so)
# Output: one tab-separated line per run: how, phase-1 MFLOPS, phase-2 MFLOPS, Gosa; then the
# ratios first/warm of phase 2. FIRST_RUN_LOGS=dir keeps the outputs there.
set -u
src="$(cd "${1:?SRC_DIR}" && pwd)"
bin="$(cd "${2:?BIN_DIR}" && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/first-run-himeno.XXXXXX")"
trap 'rm -rf "$work"' EXIT
cp -r "$src" "$work/src"
export YOSEGI_DEVICE=cuda
logs="${FIRST_RUN_LOGS:-$work/logs}"
mkdir -p "$logs"

mflops() { grep -E "MFLOPS measured" "$1" | sed -E 's/.*: *//' | tr '\n' '\t'; grep -m1 -E "^Gosa" "$1" | sed -E 's/.*: *//'; }

(cd "$work/src" && make CC="$bin/yosegi-cc" >"$logs/build.log" 2>&1) || { tail -5 "$logs/build.log" >&2; exit 1; }
printf 'how\tphase1_MFLOPS\tphase2_MFLOPS\tgosa\n'
exe="$work/src/himeno.x"
YOSEGI_CACHE_DIR="$work/cache-make" "$exe" >"$logs/make1.out" 2>"$logs/make1.err"; printf 'make first\t%s\n' "$(mflops "$logs/make1.out")"
YOSEGI_CACHE_DIR="$work/cache-make" "$exe" >"$logs/make2.out" 2>"$logs/make2.err"; printf 'make warm\t%s\n' "$(mflops "$logs/make2.out")"
for k in 1 2 3; do
    stats=()
    [ $k = 3 ] && stats=(--stats=json)
    (cd "$work/src" && YOSEGI_CACHE_DIR="$work/cache-run" "$bin/yosegi" run --device cuda "${stats[@]}" himeno_C.c) </dev/null >"$logs/run$k.out" 2>"$logs/run$k.err"
    printf 'run %s\t%s\n' "$(case $k in 1) echo first;; 2) echo warm;; 3) echo stats;; esac)" "$(mflops "$logs/run$k.out")"
done
