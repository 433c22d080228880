#!/usr/bin/env bash
# Loop fusion table: each case runs with `yosegi run --fusion off`, `on` and `auto`, and the
# table gives each one's time, the speed-up of `on` and `auto` over `off`, the kernels' device
# time (`--stats`, every kernel of the run: the fused chain and the rest) off and on, the global loads
# and stores the simulator counts for the case at a small size (`--device sim --stats`, fusion
# off and on, both with `--staging off`: the traffic fusion alone saves; the simulator counts
# a load per load in the code, which a staged variant reads from shared memory instead). Every output is checked against the `off` run (the
# checksums a case prints must agree within 1e-9): a fusion that changes an answer is a FAIL.
#
#   bench/fusion.sh [--only CASE,...] [--runs K] [--device sim --tiny] BINARY
#
#   --only     cases: ll18 ll18-8k y_solve y_solve-8k filter filter-256, and fusion across time
#              steps: jacobi2d-steps jacobi2d-steps-8k heat3d-steps heat3d-steps-512 (default all;
#              for these `on` runs the kernel of the most steps, `auto` the fastest it measured)
#   --runs     runs per case and mode; the table keeps the fastest (default 3)
#   --device   cuda (default) or sim; with --tiny (small sizes) to check the script itself
#
# The programs (bench/fusion/) time their step loop, whose first step includes loading the
# kernels (NVRTC or the kernel cache): each case runs enough steps for the steps to dominate,
# and `auto` spends its first four chain launches measuring fused against unfused.
# Logs and results.md go to $OUT when set (the GPU runner), else bench/out/fusion/.
set -u -o pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
only=""
runs=3
binary=""
device=cuda
tiny=""
while [ $# -gt 0 ]; do
    case "$1" in
        --device) device="$2"; shift 2 ;;
        --tiny) tiny=1; shift ;;
        --only) only="$2"; shift 2 ;;
        --runs) runs="$2"; shift 2 ;;
        -h|--help) sed -n '2,/^set -u/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
        -*) echo "fusion: unknown option $1" >&2; exit 2 ;;
        *) binary="$1"; shift ;;
    esac
done
[ -n "$binary" ] && [ -x "$binary" ] || { echo "fusion: give the yosegi binary" >&2; exit 2; }
out="${OUT:-$root/bench/out}/fusion"
mkdir -p "$out"
# Runtimes allocate scratch arrays per call (malloc and free in the step), and the runtime's
# malloc zeroes what it returns: glibc reuses freed heap blocks, which then need zeroing on
# every call, unless big blocks come fresh from mmap (zero already). The same for every mode.
export MALLOC_MMAP_THRESHOLD_=65536
for dir in "${CUDA_HOME:-/usr/local/cuda}/lib64" /usr/local/cuda/lib64; do
    [ -d "$dir" ] && export LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" && break
done
echo "GPU: $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)"

# name | source | args on the GPU | args for the simulator's traffic counts
cases=(
    "ll18|$root/bench/fusion/ll18.c|4096 4096 100|256 256 1"
    "ll18-8k|$root/bench/fusion/ll18.c|8192 8192 50|256 256 1"
    "y_solve|$root/bench/fusion/y_solve.c|4096 100|256 1"
    "y_solve-8k|$root/bench/fusion/y_solve.c|8192 50|256 1"
    "filter|$root/bench/fusion/filter.c|128 200|48 1"
    "filter-256|$root/bench/fusion/filter.c|256 50|48 1"
    "jacobi2d-steps|$root/bench/fusion/jacobi2d_steps.c|4096 200|64 4"
    "jacobi2d-steps-8k|$root/bench/fusion/jacobi2d_steps.c|8192 100|64 4"
    "heat3d-steps|$root/bench/fusion/heat3d_steps.c|256 100|16 4"
    "heat3d-steps-512|$root/bench/fusion/heat3d_steps.c|512 40|16 4"
)
if [ -n "$tiny" ]; then
    cases=(
        "ll18|$root/bench/fusion/ll18.c|64 64 2|32 32 1"
        "y_solve|$root/bench/fusion/y_solve.c|64 2|32 1"
        "filter|$root/bench/fusion/filter.c|16 2|12 1"
    )
fi
selected() {
    [ -z "$only" ] && return 0
    [[ ",$only," == *",$1,"* ]]
}
answers() {
    grep -i 'checksums' "$1" | grep -o -E '[-+]?[0-9]+\.[0-9]+([eE][-+]?[0-9]+)?' | tr '\n' ' '
}
agree() {
    python3 - "$1" "$2" <<'PY'
import sys
a, b = sys.argv[1].split(), sys.argv[2].split()
ok = len(a) == len(b) and len(a) > 0 and all(abs(float(x) - float(y)) <= 1e-9 * max(abs(float(x)), abs(float(y)), 1e-12) for x, y in zip(a, b))
sys.exit(0 if ok else 1)
PY
}
stat_of() {
    grep -E "^$2" "$1" | awk '{print $NF}' | head -1
}
traffic() {
    # Global loads + stores (elements) the simulator counts for one run.
    local log="$out/$1.sim-$2"
    # shellcheck disable=SC2086
    "$binary" run --device sim --staging off --fusion "$2" --stats "$3" -- $4 >"$log.out" 2>"$log.err" || { echo "-"; return; }
    echo "$(stat_of "$log.err" 'global loads')/$(stat_of "$log.err" 'global stores')"
}

table="$out/results.md"
{
    echo "| case | off (s) | on (s) | auto (s) | on vs off | auto vs off | kernels off / on (ms) | kernels on vs off | sim loads/stores off | on | check |"
    echo "|---|---|---|---|---|---|---|---|---|---|---|"
} >"$table"
for spec in "${cases[@]}"; do
    IFS='|' read -r name source args sim_args <<<"$spec"
    selected "$name" || continue
    declare -A best=()
    declare -A kernels=()
    check=PASS
    base_answers=""
    for mode in off on auto; do
        best[$mode]=""
        log="$out/$name.$mode"
        for ((r = 0; r < runs; r++)); do
            # shellcheck disable=SC2086
            "$binary" run --device "$device" --fusion "$mode" --stats "$source" -- $args >"$log.out" 2>"$log.err"
            status=$?
            if [ "$status" -ne 0 ]; then
                check="FAIL ($mode exit $status)"
                break
            fi
            t="$(grep -o -E 'time: ([0-9.]+)' "$log.out" | head -1 | sed -E 's/time: //')"
            if [ -n "$t" ] && { [ -z "${best[$mode]}" ] || python3 -c "import sys; sys.exit(0 if float('$t') < float('${best[$mode]}') else 1)"; }; then
                best[$mode]="$t"
                kernels[$mode]="$(stat_of "$log.err" 'kernel time on the device')"
            fi
        done
        got="$(answers "$log.out")"
        if [ -z "$base_answers" ]; then
            base_answers="$got"
        elif ! agree "$base_answers" "$got"; then
            check="FAIL ($mode answers differ from off: $got)"
        fi
    done
    ratio() { python3 -c "print(f'{float(\"$1\") / float(\"$2\"):.2f}x')" 2>/dev/null || echo -; }
    on_ratio="$(ratio "${best[off]}" "${best[on]}")"
    auto_ratio="$(ratio "${best[off]}" "${best[auto]}")"
    kernel_ratio="$(ratio "${kernels[off]:-}" "${kernels[on]:-}")"
    echo "| $name | ${best[off]:--} | ${best[on]:--} | ${best[auto]:--} | $on_ratio | $auto_ratio | ${kernels[off]:--} / ${kernels[on]:--} | $kernel_ratio | $(traffic "$name" off "$source" "$sim_args") | $(traffic "$name" on "$source" "$sim_args") | $check |" >>"$table"
done
cat "$table"
