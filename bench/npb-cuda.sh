#!/usr/bin/env bash
# Builds and runs the hand-written CUDA NAS Parallel Benchmarks of GMAP/NPB-GPU
# (https://github.com/GMAP/NPB-GPU, its CUDA/ folder), the anchor Yosegi's NPB-ACC times are
# compared with (issue 13). Fetches nothing: clone the suite yourself and give its CUDA/ folder.
# The clone is not modified: it is copied into a scratch folder and built there with nvcc for the
# GPU present (the suite's own get_gpu_arch.sh), C++17 (CUDA 13's Thrust needs it).
#
# Usage:
#   bench/npb-cuda.sh [--class C]... [--only NAME]... [--tsv FILE] CUDA_DIR
#   --class C    problem class, may be repeated (default B)
#   --only NAME  only this benchmark (BT CG EP FT LU MG SP), may be repeated
#   --tsv FILE   one line per run: name, class, status, seconds, Mop/s
# Prints one line per benchmark and class: status (PASS when it printed
# `Verification = SUCCESSFUL`), seconds and Mop/s as the benchmark reports them.
set -u
die() { echo "npb-cuda: $*" >&2; exit 2; }
classes=() only=() tsv= dir=
while [ $# -gt 0 ]; do
    case "$1" in
        --class) [ $# -ge 2 ] || die "--class needs a value"; classes+=("$2"); shift 2 ;;
        --only) [ $# -ge 2 ] || die "--only needs a value"; only+=("$2"); shift 2 ;;
        --tsv) [ $# -ge 2 ] || die "--tsv needs a value"; tsv=$2; shift 2 ;;
        -h|--help) sed -n '/^# Usage:/,/^# Prints/p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        -*) die "unknown option $1" ;;
        *) [ -z "$dir" ] || die "one CUDA folder only"; dir=$1; shift ;;
    esac
done
[ -n "$dir" ] && [ -f "$dir/config/make.def" ] || die "give the CUDA/ folder of an NPB-GPU clone"
[ ${#classes[@]} -gt 0 ] || classes=(B)
[ ${#only[@]} -gt 0 ] || only=(BT CG EP FT LU MG SP)
command -v nvcc >/dev/null || die "nvcc is needed"
scratch=$(mktemp -d "${TMPDIR:-/tmp}/npb-cuda.XXXXXX") || die "cannot create a scratch folder"
trap 'rm -rf "$scratch"' EXIT
cp -r "$dir"/. "$scratch/"
field() { grep -m1 -E "^ *$1 *=" "$2" | sed -E 's/^[^=]*= *//; s/ *$//'; }
lines=()
for class in "${classes[@]}"; do
    for bench in "${only[@]}"; do
        lower=$(echo "$bench" | tr 'A-Z' 'a-z')
        log="$scratch/$bench.$class.log"
        status= seconds= mops=
        if ! make -C "$scratch" "$bench" CLASS="$class" CPP_14=-std=c++17 >"$log.build" 2>&1; then
            status=BUILD-FAIL
        elif ! timeout 600 "$scratch/bin/$lower.$class" >"$log" 2>&1; then
            status=FAIL
        elif grep -qE "Verification *= *SUCCESSFUL" "$log"; then
            status=PASS
        else
            status=FAIL
        fi
        [ -f "$log" ] && seconds=$(field "Time in seconds" "$log") && mops=$(field "Mop/s total" "$log")
        printf '%-3s %s %-10s %10s s %14s Mop/s\n' "$bench" "$class" "$status" "${seconds:--}" "${mops:--}"
        lines+=("$bench	$class	$status	${seconds:--}	${mops:--}")
    done
done
[ -n "$tsv" ] && printf '%s\n' "${lines[@]}" >"$tsv"
exit 0
