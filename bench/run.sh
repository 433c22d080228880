#!/usr/bin/env bash
# Yosegi benchmark driver for a GPU machine (built yosegi binary, gcc, python3, nvcc; no Rust,
# no network). Prints the GPU, measures the device-to-device copy ceiling once, runs every
# benchmark program K times with `yosegi run --stats`, checks results against gcc builds, and
# prints a markdown table (bench/NOTES.md explains the method).
#
#   bench/run.sh [--device cuda|sim] [--quick] [--tiny] [--runs K] [--only P1,P2] [--no-reference]
#                [--ceiling-gib G] [--timeout S] [--staging auto|on|off] [--staging-compare]
#                [--seed-experiment] BINARY
#
#   --quick        one run per case (default 3) and a 1 GiB ceiling copy (default 4 GiB)
#   --tiny         tiny sizes (bench/selftest.sh; meant for --device sim)
#   --only         programs (himeno,jacobi2d,diffusion1d,diffusion_wide,wide_stencil_f32,heat3d,cg,matmul_vec,row_scan) or
#                  cases (himeno-L, cg-1024_2, matmul_vec-65536x1024)
#   --no-reference skip the gcc reference runs (every check reads "skipped")
#   --timeout S    seconds allowed to each yosegi or gcc-reference run (default 300)
#   --staging M    pass `--staging M` to every yosegi run (default: the binary's default, auto)
#   --staging-compare  run every case with --staging off, auto and on in one run, and print a
#                  table of the three times and the speed-ups over global memory (off)
#   --seed-experiment  only the seed's 1-D diffusion experiment (8192..65536 points, 1000 steps),
#                  with the seed's staged/global ratios beside ours (use with --staging-compare)
#
# Logs, results.md and results.json go to $OUT when set (the GPU runner), else bench/out/.
# Exit status: 0 when every case passed or was skipped by design, 1 otherwise, 2 on usage errors.
set -u -o pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
device=cuda
runs=3
sizes=full
ceiling_gib=4
only=""
no_reference=""
binary=""
timeout=300
staging_args=()

usage() {
    sed -n '2,/^set -u/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' >&2
    exit "${1:-2}"
}

while [ $# -gt 0 ]; do
    case "$1" in
        --device) device="${2:-}"; shift 2 ;;
        --device=*) device="${1#*=}"; shift ;;
        --quick) runs=1; ceiling_gib=1; shift ;;
        --tiny) sizes=tiny; shift ;;
        --runs) runs="${2:-}"; shift 2 ;;
        --only) only="${2:-}"; shift 2 ;;
        --no-reference) no_reference=--no-reference; shift ;;
        --ceiling-gib) ceiling_gib="${2:-}"; shift 2 ;;
        --timeout) timeout="${2:-}"; shift 2 ;;
        --staging) staging_args+=(--staging "${2:-}"); shift 2 ;;
        --staging=*) staging_args+=(--staging "${1#*=}"); shift ;;
        --staging-compare) staging_args+=(--staging-compare); shift ;;
        --seed-experiment) staging_args+=(--seed-experiment); shift ;;
        -h|--help) usage 0 ;;
        -*) echo "run.sh: unknown option $1" >&2; usage ;;
        *) [ -z "$binary" ] || usage; binary="$1"; shift ;;
    esac
done
[ -n "$binary" ] || usage
case "$device" in cuda|sim) ;; *) echo "run.sh: --device must be cuda or sim" >&2; exit 2 ;; esac
[ -x "$binary" ] || { echo "run.sh: $binary is not an executable file" >&2; exit 2; }

out="${OUT:-$here/out}"
mkdir -p "$out"
summary="$out/summary.txt"
: > "$summary"
say() { echo "$@" | tee -a "$summary"; }

say "# Yosegi benchmarks ($(date -u '+%Y-%m-%d %H:%M UTC'), device $device)"
say "binary: $binary ($("$binary" --version 2>/dev/null | head -n 1))"

# (a) the GPU
if command -v nvidia-smi >/dev/null 2>&1; then
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv 2>&1 | tee -a "$summary"
    nvidia-smi > "$out/nvidia-smi.txt" 2>&1
else
    say "gpu: nvidia-smi not found"
fi

# (b) the copy ceiling, once
ceiling_args=()
if [ "$device" = cuda ]; then
    line=""
    if python3 "$here/copy_ceiling.py" --gib "$ceiling_gib" > "$out/ceiling.log" 2>&1; then
        line="$(grep '^ceiling_gbs ' "$out/ceiling.log" | tail -n 1)"
    elif command -v nvcc >/dev/null 2>&1; then
        echo "python3 copy failed or has no torch/cupy; trying nvcc" >> "$out/ceiling.log"
        if nvcc -O2 -o "$out/copy_ceiling" "$here/copy_ceiling.cu" >> "$out/ceiling.log" 2>&1 &&
            "$out/copy_ceiling" "$ceiling_gib" 20 >> "$out/ceiling.log" 2>&1; then
            line="$(grep '^ceiling_gbs ' "$out/ceiling.log" | tail -n 1)"
        fi
    else
        echo "python3 copy failed or has no torch/cupy, and nvcc is not on PATH" >> "$out/ceiling.log"
    fi
    if [ -n "$line" ]; then
        gbs="$(echo "$line" | awk '{print $2}')"
        note="($(echo "$line" | cut -d' ' -f3-))"
        ceiling_args=(--ceiling-gbs "$gbs" --ceiling-note "$note")
        say "copy ceiling: $gbs GB/s $note"
    else
        say "copy ceiling: not measured (see $out/ceiling.log)"
        ceiling_args=(--ceiling-note "(measurement failed, see ceiling.log)")
    fi
else
    say "copy ceiling: skipped on the $device device"
    ceiling_args=(--ceiling-note "(skipped on the $device device)")
fi

# (c) + (d) the programs and the table
python3 "$here/bench.py" "$binary" --device "$device" --sizes "$sizes" --runs "$runs" \
    --timeout "$timeout" --out "$out" ${only:+--only "$only"} $no_reference "${ceiling_args[@]}" \
    ${staging_args[@]+"${staging_args[@]}"} | tee -a "$summary"
status=$?
say ""
say "logs: $out/logs, table: $out/results.md, raw numbers: $out/results.json"
exit "$status"
