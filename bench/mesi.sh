#!/usr/bin/env bash
# The MESI-CUDA dialect against hand-written CUDA: the paper's two benchmarks (1-D diffusion,
# 1000 steps; the thread-per-bin histogram, rounds of host change + launch + host read) written
# in the dialect (examples/mesi/*.cu, run by `yosegi run`) and in CUDA with explicit cudaMalloc
# and cudaMemcpy (bench/mesi/*_cuda.cu, built by `nvcc -O3`), at several sizes. Both time the
# same section of the program (first copy in to the result read back) and print it as `time:`;
# the table has the lowest of RUNS runs of each, their ratio, and the bytes each moved (the
# hand version counts its copies; Yosegi's come from `--stats`). Each Yosegi size runs once
# first, untimed, so that its kernels are compiled and its variant choice cached, as a
# compiled CUDA program's are.
#
#   bench/mesi.sh [--device cuda|sim] [--runs K] [--steps S] [--rounds R]
#                 [--diffusion "N ..."] [--histogram "LEN ..."] [--bins B] BINARY
#
#   --device sim runs the Yosegi side on the simulator and skips nvcc (checks the script itself)
#
# Prints results.md (also to $OUT/mesi, else bench/out/mesi); exit status 1 when an output of
# the dialect differs from the hand-written program's, 2 on usage errors.
set -u -o pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
device=cuda
runs=3
steps=1000
rounds=1000
diffusion_sizes="8192 16384 32768 65536 1048576 16777216"
histogram_sizes="256 512 1024 2048 25600 262144"
bins=256
binary=""
while [ $# -gt 0 ]; do
    case "$1" in
        --device) device=$2; shift 2 ;;
        --runs) runs=$2; shift 2 ;;
        --steps) steps=$2; shift 2 ;;
        --rounds) rounds=$2; shift 2 ;;
        --diffusion) diffusion_sizes=$2; shift 2 ;;
        --histogram) histogram_sizes=$2; shift 2 ;;
        --bins) bins=$2; shift 2 ;;
        -h|--help) sed -n '2,/^set -u/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
        -*) echo "mesi.sh: unknown option $1" >&2; exit 2 ;;
        *) binary=$1; shift ;;
    esac
done
[ -n "$binary" ] && [ -x "$binary" ] || { echo "mesi.sh: give the yosegi binary" >&2; exit 2; }
binary="$(cd "$(dirname "$binary")" && pwd)/$(basename "$binary")"
out="${OUT:-$root/bench/out}/mesi"
rm -rf "$out" && mkdir -p "$out"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
status=0

# The lowest `time:` of K runs of a command; the first line of its output goes to $work/first.
best_time() {
    local best="" t line
    for _ in $(seq "$runs"); do
        line="$("$@" 2>"$work/err")" || { echo "FAILED: $*" >&2; cat "$work/err" >&2; echo "nan"; return; }
        printf '%s\n' "$line" | head -1 >"$work/first"
        t="$(printf '%s\n' "$line" | sed -n 's/^time: \([0-9.]*\) s$/\1/p')"
        if [ -z "$best" ] || awk -v a="$t" -v b="$best" 'BEGIN { exit !(a < b) }'; then best=$t; fi
    done
    echo "$best"
}

# The bytes Yosegi's run moved each way, from --stats.
yosegi_bytes() {
    "$@" >/dev/null 2>"$work/stats" || true
    local to back
    to="$(sed -n 's/^host->device bytes *\([0-9]*\)$/\1/p' "$work/stats" | head -1)"
    back="$(sed -n 's/^device->host bytes *\([0-9]*\)$/\1/p' "$work/stats" | head -1)"
    echo "${to:-?} / ${back:-?}"
}

run_case() { # name defines args cuda-source yosegi-source
    local name=$1 defines=$2 args=$3 cuda_src=$4 dialect_src=$5
    local hand_time="-" hand_bytes="-" hand_line=""
    local -a yosegi=("$binary" run --device "$device" -w $defines "$dialect_src" -- $args)
    if [ "$device" = cuda ]; then
        local exe="$work/${name//[^a-zA-Z0-9]/_}"
        if nvcc -O3 -std=c++17 $defines "$cuda_src" -o "$exe" 2>"$work/nvcc"; then
            hand_time="$(best_time "$exe" $args)"
            hand_line="$(cat "$work/first")"
            hand_bytes="$("$exe" $args | sed -n 's/^bytes: \([0-9]*\) to the device, \([0-9]*\) back$/\1 \/ \2/p')"
        else
            cat "$work/nvcc" >&2
            hand_time="nvcc failed"
        fi
    fi
    "${yosegi[@]}" >/dev/null 2>&1   # compile and choose variants once
    local y_time y_line y_bytes ratio="-" check="-"
    y_time="$(best_time "${yosegi[@]}")"
    y_line="$(cat "$work/first")"
    y_bytes="$(yosegi_bytes "$binary" run --device "$device" -w --stats $defines "$dialect_src" -- $args)"
    if [ -n "$hand_line" ]; then
        if [ "$hand_line" = "$y_line" ]; then check=same; else check="DIFFERS"; status=1; echo "differs: $hand_line | $y_line" >&2; fi
        ratio="$(awk -v h="$hand_time" -v y="$y_time" 'BEGIN { if (y > 0) printf "%.3f", h / y; else print "-" }')"
    fi
    printf '| %s | %s | %s | %s | %s | %s | %s |\n' "$name" "$hand_time" "$y_time" "$ratio" "$hand_bytes" "$y_bytes" "$check" | tee -a "$out/results.md"
}

{
    echo "# MESI-CUDA dialect vs hand-written CUDA ($(date -u +%Y-%m-%d), device $device)"
    [ "$device" = cuda ] && nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1
    echo
    echo "lowest of $runs runs; speed = hand time / Yosegi time (above 1: Yosegi faster); bytes: to the device / back"
    echo
    echo "| case | hand CUDA (s) | Yosegi (s) | speed | hand bytes | Yosegi bytes | output |"
    echo "|---|---:|---:|---:|---:|---:|---|"
} | tee "$out/results.md"
for n in $diffusion_sizes; do
    run_case "diffusion N=$n, $steps steps" "-DN=$n" "$steps" "$here/mesi/diffusion_cuda.cu" "$root/examples/mesi/diffusion.cu"
done
for len in $histogram_sizes; do
    run_case "histogram LEN=$len BINS=$bins, $rounds rounds" "-DLEN=$len -DBINS=$bins" "$rounds" "$here/mesi/histogram_cuda.cu" "$root/examples/mesi/histogram.cu"
done
exit $status
