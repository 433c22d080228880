#!/usr/bin/env bash
# Runs the NAS Parallel Benchmarks in OpenACC C (https://github.com/uhhpctools/openacc-npb:
# BT CG EP FT LU MG SP) with `yosegi run` and reports whether each verifies, with its time and
# Mop/s. The suite is not part of this repository and this script fetches nothing: clone it
# yourself and point the script at the clone. The clone is not modified: each benchmark is
# copied into a scratch folder, where the suite's `setparams` writes its npbparams.h.
#
# Usage:
#   scripts/npb.sh [options] SUITE [YOSEGI]
#     SUITE    the clone's root (the folder holding BT/, CG/, ...)
#     YOSEGI   the yosegi binary (default: target/release/yosegi of this repository)
#   --device sim|cuda   the device the benchmarks run on (default sim)
#   --gpus N            each benchmark on N devices of one process (`yosegi run --gpus N`)
#   --ranks N           each benchmark as N MPI ranks (`yosegi run --ranks N`)
#   --class C           the problem class: S, W, A, B or C (default S)
#   --only NAME         only this benchmark (BT, CG, ...); may be given several times
#   --timeout SECS      per-benchmark time limit for the build and run (default 1800)
#   --tsv FILE          writes one line per benchmark: name, status, seconds, Mop/s, reason
#   --logs DIR          runs with `--stats` and keeps each benchmark's output in DIR/NAME.out
#                       and DIR/NAME.err (the runtime's counters, per kernel, are in .err)
#   --staging MODE      runs with `yosegi run --staging MODE` (auto, on or off; default: yosegi's)
#
# The files of each benchmark are those its own Makefile links (its OBJS, with the suite's
# make.def: RAND = randdp); they are given to `yosegi run -w -I ../common`. Statuses:
#   PASS     the benchmark printed `Verification = SUCCESSFUL`
#   FAIL     it ran and did not verify, or exited non-zero (not 2)
#   REFUSED  exit status 2 with a diagnostic (the first `error:` line is the reason)
#   CRASH    killed by a signal, a panic, or the time limit
# Prints one line per benchmark, then `summary: pass=N fail=N refused=N crash=N total=N`.
# Exit status: 0 when the run completed (whatever the benchmarks did), 2 on a usage error.
set -u

script_name=npb
# shellcheck source=suite-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/suite-lib.sh"
usage() { usage_and_exit "${1:-}" "The files" "${BASH_SOURCE[0]}"; }

device=sim
class=S
timeout_s=1800
tsv=
logs=
only=()
positional=()
staging=
extra_options=(class logs staging)
parse_suite_options "$@"
case "$class" in S|W|A|B|C) ;; *) die "--class must be S, W, A, B or C" ;; esac
case "$staging" in ''|auto|on|off) ;; *) die "--staging must be auto, on or off" ;; esac
if [ -n "$logs" ]; then
    mkdir -p "$logs" || die "cannot create $logs"
    logs="$(cd "$logs" && pwd)"
fi

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
suite=${positional[0]}
[ -d "$suite/CG" ] || die "$suite has no CG/ folder: give the root of the openacc-npb clone"
suite="$(cd "$suite" && pwd)"
yosegi=${positional[1]:-$root/target/release/yosegi}
yosegi=$(resolve_yosegi "$yosegi") || exit 2
command -v gcc >/dev/null || die "gcc is needed to build the suite's setparams"
command -v make >/dev/null || die "make is needed to read the benchmarks' Makefiles"

scratch=$(mktemp -d "${TMPDIR:-/tmp}/npb.XXXXXX") || die "cannot create a scratch folder"
trap 'rm -rf "$scratch"' EXIT
printf 'yosegi-print-objs:\n\t@echo $(OBJS)\n' >"$scratch/print-objs.mk"

field() { # the value after `NAME =` in the benchmark's report
    grep -m1 -E "^ *$1 *=" "$2" | sed -E 's/^[^=]*= *//; s/ *$//'
}

declare -A count=([PASS]=0 [FAIL]=0 [REFUSED]=0 [CRASH]=0)
results=()
for bench in BT CG EP FT LU MG SP; do
    if [ ${#only[@]} -gt 0 ]; then
        keep=0
        for o in "${only[@]}"; do [ "$o" = "$bench" ] && keep=1; done
        [ $keep = 1 ] || continue
    fi
    [ -d "$suite/$bench" ] || continue
    cp -r "$suite/$bench" "$scratch/$bench"
    top="$scratch/$bench"
    # The program folder: the one whose Makefile names the benchmark (BT/BT, LU/LU-HP, ...).
    program=$(grep -l "^BENCHMARK *= *$(echo "$bench" | tr 'A-Z' 'a-z')" "$top"/*/Makefile 2>/dev/null | head -1)
    status= reason= seconds= mops=
    if [ -z "$program" ]; then
        status=FAIL reason="no Makefile with BENCHMARK=$bench under $bench/"
    elif ! gcc -o "$top/sys/setparams" "$top/sys/setparams.c" >"$top/setparams.log" 2>&1; then
        status=FAIL reason="the suite's setparams does not build"
    else
        dir=$(dirname "$program")
        lower=$(echo "$bench" | tr 'A-Z' 'a-z')
        (cd "$dir" && ../sys/setparams "$lower" "$class") >"$top/setparams.log" 2>&1
        objs=$(make -s -C "$dir" -f Makefile -f "$scratch/print-objs.mk" yosegi-print-objs CLASS="$class" COMMON=../common RAND=randdp VEC= 2>/dev/null)
        sources=()
        for o in $objs; do sources+=("${o%.o}.c"); done
        stats=()
        [ -n "$logs" ] && stats=(--stats)
        [ -n "$staging" ] && stats+=(--staging "$staging")
        (cd "$dir" && timeout "$timeout_s" "$yosegi" run -w "${stats[@]}" --device "$device" "${spread[@]}" -I ../common "${sources[@]}") </dev/null >"$top/out.log" 2>"$top/err.log"
        rc=$?
        if [ -n "$logs" ]; then
            cp "$top/out.log" "$logs/$bench.out"
            cp "$top/err.log" "$logs/$bench.err"
        fi
        seconds=$(field "Time in seconds" "$top/out.log")
        mops=$(field "Mop/s total" "$top/out.log")
        if [ $rc = 0 ] && grep -qE "Verification *= *SUCCESSFUL" "$top/out.log"; then
            status=PASS
        elif [ $rc = 0 ]; then
            status=FAIL reason="did not verify: $(field Verification "$top/out.log")"
        else
            classify_failed_run "$rc" "$top/err.log" "$timeout_s"
        fi
    fi
    count[$status]=$((count[$status] + 1))
    printf '%-4s %-8s %10s s %12s Mop/s  %s\n' "$bench" "$status" "${seconds:--}" "${mops:--}" "$reason"
    results+=("$bench	$status	${seconds:--}	${mops:--}	$reason")
done

total=$((count[PASS] + count[FAIL] + count[REFUSED] + count[CRASH]))
[ -n "$tsv" ] && printf '%s\n' "${results[@]}" | sort >"$tsv"
echo "summary: pass=${count[PASS]} fail=${count[FAIL]} refused=${count[REFUSED]} crash=${count[CRASH]} total=$total (device $device, class $class)"
