#!/usr/bin/env bash
# Multi-GPU scaling table: each case runs with `yosegi run --device cuda --gpus N` for every N
# asked for, and the table gives its time, the speed-up over one device, the bytes copied
# between devices (`--stats`: `peer bytes`), and how many launches were split or kept whole.
# Each output is checked against the one-device run (the numbers a case prints must agree
# within its tolerance): a split that changes an answer is a FAIL, not a speed-up.
#
#   bench/multi-gpu.sh [--gpus "1 2 4"] [--only CASE,...] [--npb SUITE] [--runs K]
#                      [--device sim --tiny] BINARY
#
#   --gpus     the device counts (default "1 2"); counts above the GPUs there are run on
#              logical devices (several per GPU), which the table marks
#   --only     cases: himeno-L himeno-XL jacobi2d heat3d cg npb-cg-C (default all)
#   --npb      the openacc-npb clone, for npb-cg-C (NPB CG class C, through scripts/npb.sh)
#
# The examples time their whole data region, kernel compilation (NVRTC, once per device) and
# the first transfers included: the sizes are chosen so that the steps dominate.
#   --runs     runs per case and count; the table keeps the fastest (default 1)
#   --device   cuda (default) or sim; with --tiny (small sizes) to check the script itself
#
# Logs and results.md go to $OUT when set (the GPU runner), else bench/out/multi-gpu/.
set -u -o pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
counts="1 2"
only=""
npb=""
runs=1
binary=""
device=cuda
tiny=""
while [ $# -gt 0 ]; do
    case "$1" in
        --device) device="$2"; shift 2 ;;
        --tiny) tiny=1; shift ;;
        --gpus) counts="$2"; shift 2 ;;
        --only) only="$2"; shift 2 ;;
        --npb) npb="$2"; shift 2 ;;
        --runs) runs="$2"; shift 2 ;;
        -h|--help) sed -n '2,/^set -u/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
        -*) echo "multi-gpu: unknown option $1" >&2; exit 2 ;;
        *) binary="$1"; shift ;;
    esac
done
[ -n "$binary" ] && [ -x "$binary" ] || { echo "multi-gpu: give the yosegi binary" >&2; exit 2; }
out="${OUT:-$root/bench/out}/multi-gpu"
mkdir -p "$out"
for dir in "${CUDA_HOME:-/usr/local/cuda}/lib64" /usr/local/cuda/lib64; do
    [ -d "$dir" ] && export LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" && break
done
physical="$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')"
[ "$device" = sim ] && physical=1
echo "GPUs: $physical ($(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1))"

# name | flags and sources | program args | how to read the time (a regex whose group 1 is seconds)
cases=(
    "himeno-L|-DSIZE_L -DNN=1000 $root/examples/himeno.c||cpu : ([0-9.]+)"
    "himeno-XL|-DSIZE_XL -DNN=200 $root/examples/himeno.c||cpu : ([0-9.]+)"
    "jacobi2d|$root/examples/jacobi2d.c|8192 3000|total: ([0-9.]+)"
    "heat3d|$root/examples/heat3d.c|512 1000|time: ([0-9.]+)"
    "cg|$root/examples/cg.c|2048 3000 0|time: ([0-9.]+)"
)
if [ -n "$tiny" ]; then
    cases=(
        "himeno-L|-DSIZE_TINY -DNN=3 $root/examples/himeno.c||cpu : ([0-9.]+)"
        "jacobi2d|$root/examples/jacobi2d.c|64 20|total: ([0-9.]+)"
        "heat3d|$root/examples/heat3d.c|16 4|time: ([0-9.]+)"
        "cg|$root/examples/cg.c|32 20 0|time: ([0-9.]+)"
    )
fi
selected() {
    [ -z "$only" ] && return 0
    [[ ",$only," == *",$1,"* ]]
}

# The numbers a run prints, minus its timing lines (compared across device counts).
answers() {
    grep -v -E 'time|total|MFLOPS|Score|cpu|Rehearsal' "$1" | grep -o -E '[-+]?[0-9]+\.[0-9]+([eE][-+]?[0-9]+)?' | tr '\n' ' '
}
agree() {
    python3 - "$1" "$2" <<'PY'
import sys
a, b = sys.argv[1].split(), sys.argv[2].split()
ok = len(a) == len(b) and all(abs(float(x) - float(y)) <= 1e-4 * max(abs(float(x)), abs(float(y)), 1e-12) for x, y in zip(a, b))
sys.exit(0 if ok else 1)
PY
}
stat_of() {
    grep -E "^$2" "$1" | awk '{print $NF}' | head -1
}

table="$out/results.md"
{
    echo "| case | GPUs | time (s) | speed-up | peer bytes | split / whole launches | check |"
    echo "|---|---|---|---|---|---|---|"
} >"$table"
for spec in "${cases[@]}"; do
    IFS='|' read -r name sources args pattern <<<"$spec"
    selected "$name" || continue
    base_time=""
    base_answers=""
    for n in $counts; do
        best=""
        log="$out/$name.gpus$n"
        for ((r = 0; r < runs; r++)); do
            # shellcheck disable=SC2086
            "$binary" run --device "$device" --gpus "$n" --stats $sources -- $args >"$log.out" 2>"$log.err"
            status=$?
            [ "$status" -eq 0 ] || break
            t="$(grep -o -E "$pattern" "$log.out" | head -1 | sed -E "s/$pattern/\1/")"
            if [ -n "$t" ] && { [ -z "$best" ] || python3 -c "import sys; sys.exit(0 if float('$t') < float('$best') else 1)"; }; then
                best="$t"
            fi
        done
        label="$n"
        [ "$n" -gt "$physical" ] && label="$n (logical on $physical)"
        if [ "$status" -ne 0 ] || [ -z "$best" ]; then
            echo "| $name | $label | - | - | - | - | FAIL (exit $status) |" >>"$table"
            continue
        fi
        got="$(answers "$log.out")"
        check=PASS
        if [ -z "$base_answers" ]; then
            base_answers="$got"
            base_time="$best"
        elif ! agree "$base_answers" "$got"; then
            check="FAIL (answers differ from 1 GPU: $got)"
        fi
        speedup="$(python3 -c "print(f'{float(\"$base_time\") / float(\"$best\"):.2f}x')")"
        peer="$(stat_of "$log.err" 'peer bytes')"
        split="$(stat_of "$log.err" 'launches split')/$(stat_of "$log.err" 'launches kept')"
        echo "| $name | $label | $best | $speedup | ${peer:-0} | ${split} | $check |" >>"$table"
    done
done

if [ -n "$npb" ] && selected npb-cg-C; then
    base=""
    for n in $counts; do
        tsv="$out/npb-cg-C.gpus$n.tsv"
        YOSEGI_GPUS="$n" "$root/scripts/npb.sh" --device "$device" --class C --only CG --tsv "$tsv" --logs "$out/npb-gpus$n" "$npb" "$binary" >/dev/null 2>&1
        IFS=$'\t' read -r _ status seconds _ _ <"$tsv"
        [ -z "$base" ] && [ "$status" = PASS ] && base="$seconds"
        speedup="-"
        [ -n "$base" ] && [ "$status" = PASS ] && speedup="$(python3 -c "print(f'{float(\"$base\") / float(\"$seconds\"):.2f}x')")"
        peer="$(stat_of "$out/npb-gpus$n/CG.err" 'peer bytes')"
        split="$(stat_of "$out/npb-gpus$n/CG.err" 'launches split')/$(stat_of "$out/npb-gpus$n/CG.err" 'launches kept')"
        echo "| npb-cg-C | $n | $seconds | $speedup | ${peer:-0} | $split | $status |" >>"$table"
    done
fi
cat "$table"
# One archive of the logs (the runner returns a limited number of files).
tar -czf "$out.tar.gz" -C "$(dirname "$out")" "$(basename "$out")" && rm -rf "$out"/*.out "$out"/*.err "$out"/npb-gpus*
