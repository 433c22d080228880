#!/usr/bin/env bash
# Where `--stats` spends its time in a launch-bound program: NPB LU (openacc-npb) built by
# `make CC=yosegi-cc`, one run to fill the kernel cache, then warm and YOSEGI_STATS=json runs
# alternated, each under the CPU-time sampler (sampler.c, 1 kHz of process CPU time, a PC
# and a short backtrace a sample). Compare the two with `symbolize.py OUT/warmK.PID` and
# `symbolize.py OUT/statsK.PID` (flat and inclusive sample counts).
#
# Usage: bench/profile/lu-stats-profile.sh SUITE BIN_DIR OUT [CLASS]
set -u
suite="$(cd "${1:?SUITE}" && pwd)"; bin="$(cd "${2:?BIN_DIR}" && pwd)"
out="${3:?OUT}"; class="${4:-C}"
here="$(cd "$(dirname "$0")" && pwd)"
mkdir -p "$out"; out="$(cd "$out" && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/lu-profile.XXXXXX")"; trap 'rm -rf "$work"' EXIT
gcc -O2 -shared -fPIC -o "$work/sampler.so" "$here/sampler.c"
cp -r "$suite/LU" "$work/LU"
dir=$(dirname "$(grep -l "^BENCHMARK *= *lu" "$work"/LU/*/Makefile | head -1)")
(cd "$dir" && make CC="$bin/yosegi-cc" CLINK="$bin/yosegi-cc" CLASS="$class" >"$work/build.log" 2>&1) || { tail "$work/build.log"; exit 1; }
exe="$work/LU/bin/lu.$class.x"; [ -x "$exe" ] || exe="$dir/lu.$class.x"
export YOSEGI_CACHE_DIR="$work/cache" YOSEGI_DEVICE=cuda
timed() { local s; s=$(date +%s.%N); "$@"; python3 -c "import time, sys; print(f'wall {time.time() - float(sys.argv[1]):.2f} s')" "$s"; }
timed "$exe" >"$work/fill.out" 2>&1; grep "Time in" "$work/fill.out"
for k in 1 2; do
    timed env SAMPLER_OUT="$out/warm$k" LD_PRELOAD="$work/sampler.so" "$exe" >"$out/warm$k.out" 2>&1; grep "Time in" "$out/warm$k.out"
    timed env SAMPLER_OUT="$out/stats$k" YOSEGI_STATS=json YOSEGI_STATS_DIR="$out/json$k" LD_PRELOAD="$work/sampler.so" "$exe" >"$out/stats$k.out" 2>"$out/stats$k.err"; grep "Time in" "$out/stats$k.out"
done
