#!/usr/bin/env bash
# Runs `yosegi explain` over the examples of this repository and, when given, NPB-ACC
# (https://github.com/uhhpctools/openacc-npb) and PolyBench-ACC
# (https://github.com/cavazos-lab/PolyBench-ACC), and lists every loop that runs in order
# (a kernel on one thread, or loops run sequentially inside each thread) with the reason explain
# gives. A reason is a witness when it proves the order matters: a pair of iterations and the
# element one writes and the other uses ("with n = 2, iteration i = 0 writes x[0] and iteration
# i = 1 reads it"), every iteration writing one element, or a scalar read before an iteration
# assigns it. A kernel that is no loop ("the body runs once") is not counted. The suites are
# not part of this repository and this script fetches nothing: clone them yourself.
#
# Usage:
#   scripts/explain-scan.sh [--npb SUITE] [--polybench SUITE] [YOSEGI]
#     --npb SUITE        the openacc-npb clone's root (the folder holding BT/, CG/, ...)
#     --polybench SUITE  the PolyBench-ACC clone's root (its OpenACC/ folder is scanned)
#     YOSEGI             the yosegi binary (default: target/release/yosegi of this repository)
# Prints one line per loop run in order: `WITNESS` or `NO-WITNESS`, the program, the kernel
# and the reason; then `summary: in-order=N witness=W no-witness=U programs=P failed=F`.
# Exit status: 0 when every loop run in order has a witness, 1 otherwise, 2 on a usage error.
set -u

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
npb=
polybench=
yosegi=
while [ $# -gt 0 ]; do
    case "$1" in
        --npb) npb=${2:?--npb needs a folder}; shift 2 ;;
        --polybench) polybench=${2:?--polybench needs a folder}; shift 2 ;;
        -h|--help) sed -n '2,21p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
        -*) echo "explain-scan: unknown option $1" >&2; exit 2 ;;
        *) yosegi=$1; shift ;;
    esac
done
yosegi=${yosegi:-$root/target/release/yosegi}
[ -x "$yosegi" ] || { echo "explain-scan: no yosegi binary at $yosegi (cargo build --release)" >&2; exit 2; }
[ -z "$npb" ] || [ -d "$npb/CG" ] || { echo "explain-scan: $npb has no CG/ folder" >&2; exit 2; }
[ -z "$polybench" ] || [ -d "$polybench/OpenACC" ] || { echo "explain-scan: $polybench has no OpenACC/ folder" >&2; exit 2; }

scratch=$(mktemp -d "${TMPDIR:-/tmp}/explain-scan.XXXXXX") || exit 2
trap 'rm -rf "$scratch"' EXIT
in_order=0 witness=0 no_witness=0 programs=0 failed=0

# A reason that proves the order of the iterations matters.
is_witness() {
    grep -qE 'iteration [^ ]+ = [^ ]+ (writes|reads)|every iteration of the loop over .* (writes|updates) the same element|is read (\(line [0-9]+\) )?before (an|this) iteration assigns it|an .atomic. in another iteration updates it' <<<"$1"
}

# scan NAME DIR ARGS...: explain in DIR with ARGS, and classify what runs in order.
scan() {
    local name=$1 dir=$2
    shift 2
    programs=$((programs + 1))
    if ! (cd "$dir" && "$yosegi" explain -w "$@") >"$scratch/out" 2>"$scratch/err"; then
        failed=$((failed + 1))
        echo "FAILED     $name: $(grep -m1 '^error' "$scratch/err")"
        return
    fi
    local kernel="" line reason
    while IFS= read -r line; do
        case "$line" in
            "  kernel "*) kernel=${line#  kernel } ;;
            "    sequential: the body runs once"*) ;;
            "    sequential: "* | "    sequential inside each thread: "*)
                reason=${line#*: }
                in_order=$((in_order + 1))
                if is_witness "$reason"; then
                    witness=$((witness + 1))
                    echo "WITNESS    $name $kernel: $reason"
                else
                    no_witness=$((no_witness + 1))
                    echo "NO-WITNESS $name $kernel: $reason"
                fi
                ;;
        esac
    done <"$scratch/out"
}

for example in "$root"/examples/*.c; do
    scan "examples/$(basename "$example")" "$root/examples" "$example"
done

if [ -n "$npb" ]; then
    printf 'print-objs:\n\t@echo $(OBJS)\n' >"$scratch/print-objs.mk"
    for bench in BT CG EP FT LU MG SP; do
        [ -d "$npb/$bench" ] || continue
        cp -r "$npb/$bench" "$scratch/$bench"
        program=$(grep -l "^BENCHMARK *= *$(echo "$bench" | tr 'A-Z' 'a-z')" "$scratch/$bench"/*/Makefile 2>/dev/null | head -1)
        [ -n "$program" ] || { failed=$((failed + 1)); echo "FAILED     NPB $bench: no Makefile"; continue; }
        dir=$(dirname "$program")
        gcc -o "$scratch/$bench/sys/setparams" "$scratch/$bench/sys/setparams.c" 2>/dev/null || { failed=$((failed + 1)); continue; }
        (cd "$dir" && ../sys/setparams "$(echo "$bench" | tr 'A-Z' 'a-z')" S) >/dev/null 2>&1
        objs=$(make -s -C "$dir" -f Makefile -f "$scratch/print-objs.mk" print-objs CLASS=S COMMON=../common RAND=randdp VEC= 2>/dev/null)
        sources=()
        for o in $objs; do sources+=("${o%.o}.c"); done
        scan "NPB/$bench" "$dir" -I ../common "${sources[@]}"
    done
fi

if [ -n "$polybench" ]; then
    acc="$polybench/OpenACC"
    while IFS= read -r src; do
        dir=$(dirname "$src")
        scan "PolyBench/$(basename "$src")" "$dir" -I "$acc/utilities" -I "$dir" -DSMALL_DATASET "$src" "$acc/utilities/polybench.c"
    done < <(find "$acc" -name '*.c' ! -path '*/utilities/*' | sort)
fi

echo "summary: in-order=$in_order witness=$witness no-witness=$no_witness programs=$programs failed=$failed"
[ "$no_witness" = 0 ] && [ "$failed" = 0 ]
