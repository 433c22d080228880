#!/usr/bin/env bash
# Runs the OpenACC programs of PolyBench-ACC (https://github.com/cavazos-lab/PolyBench-ACC) with
# `yosegi run` and compares the arrays each one dumps with those of gcc's sequential build of the
# same file (pragmas ignored). The suite is not part of this repository and this script fetches
# nothing: clone it yourself and point the script at the clone.
#
# Usage:
#   scripts/polybench.sh [options] SUITE [YOSEGI]
#     SUITE    the suite's folder: the clone's root or its OpenACC/ folder
#     YOSEGI   the yosegi binary (default: target/release/yosegi of this repository)
#   --device sim|cuda    the device the programs run on (default sim)
#   --gpus N             each program on N devices of one process (`yosegi run --gpus N`;
#                        with --make: YOSEGI_GPUS=N)
#   --ranks N            each program as N MPI ranks (`yosegi run --ranks N`; not with --make)
#   --dataset NAME       MINI, SMALL, STANDARD, LARGE or EXTRALARGE (default SMALL)
#   --only NAME          only this program (its file name without .c); may be given several times
#   --timeout SECS       per-program time limit for each build and run (default 300)
#   --budget SECS        start no program after SECS seconds (the ones run so far count; 0: no
#                        limit). Unlike a `timeout` around the script, no program is left running.
#   --tsv FILE           writes one line per program: name, status, reason (sorted)
#   --make               builds each program with its own Makefile (in a copy of the suite) and
#                        the driver `yosegi-cc` next to YOSEGI as CC, instead of `yosegi run`:
#                        make CC=yosegi-cc OBJ=NAME.c ACC_INC_PATH= ACC_LIB_PATH= ACC_LIBS=-lm
#                        CFLAGS="-O2 -w <dataset flags>" --eval '%-data.c: ; @: > $@'
#                        (the Makefiles' first step is ROSE's roseacc, which Yosegi replaces);
#                        runs the executable with YOSEGI_DEVICE set to the device
#
# Each program is built as `-I utilities -I DIR -D<DATASET>_DATASET -DPOLYBENCH_DUMP_ARRAYS
# DIR/NAME.c utilities/polybench.c` by gcc (-O2, the reference) and by `yosegi run -w` (a
# program whose source fixes its own dataset gets the requested one's sizes as -D flags); the
# arrays the program prints on stderr must agree number by number (within 1e-6 relative, or
# the last printed digit). Statuses:
#   PASS     both ran, the dumps agree
#   FAIL     Yosegi's run exited non-zero (not 2) or its dump differs (the reason says where)
#   REFUSED  exit status 2 with a diagnostic (the first `error:` line is the reason)
#   CRASH    killed by a signal, a panic, or the time limit
#   NOREF    gcc's reference did not build or run (the program is not counted against Yosegi)
# Prints one line per program, then `summary: pass=N fail=N refused=N crash=N noref=N total=N`.
# Exit status: 0 when the run completed (whatever the programs did), 2 on a usage error.
set -u

script_name=polybench
# shellcheck source=suite-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/suite-lib.sh"
# shellcheck source=polybench-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/polybench-lib.sh"
usage() { usage_and_exit "${1:-}" "Each program" "${BASH_SOURCE[0]}"; }

device=sim
dataset=SMALL
timeout_s=300
budget=0
tsv=
only=()
positional=()
extra_options=(dataset budget)
make_mode=0
args=()
for a in "$@"; do if [ "$a" = --make ]; then make_mode=1; else args+=("$a"); fi; done
parse_suite_options "${args[@]}"
case "$dataset" in MINI|SMALL|STANDARD|LARGE|EXTRALARGE) ;; *) die "--dataset must be MINI, SMALL, STANDARD, LARGE or EXTRALARGE" ;; esac
gpus=
if [ ${#spread[@]} -gt 0 ] && [ "${spread[0]}" = --gpus ]; then
    gpus=${spread[1]}
elif [ ${#spread[@]} -gt 0 ] && [ $make_mode = 1 ]; then
    die "--ranks runs the programs with \`yosegi run\`; with --make, start the executables under mpirun yourself"
fi

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
suite=${positional[0]}
[ -d "$suite/OpenACC" ] && suite="$suite/OpenACC"
[ -f "$suite/utilities/polybench.c" ] || die "$suite has no utilities/polybench.c: give the PolyBench-ACC clone or its OpenACC/ folder"
suite="$(cd "$suite" && pwd)"
yosegi=${positional[1]:-$root/target/release/yosegi}
yosegi=$(resolve_yosegi "$yosegi") || exit 2
if [ $make_mode = 1 ]; then
    command -v make >/dev/null || die "--make needs make"
    yosegi_cc="$(dirname "$yosegi")/yosegi-cc"
    [ -x "$yosegi_cc" ] || die "--make needs yosegi-cc next to $yosegi (cargo build --release builds it)"
fi
command -v gcc >/dev/null || die "gcc is needed for the reference builds"

scratch=$(mktemp -d "${TMPDIR:-/tmp}/polybench.XXXXXX") || die "cannot create a scratch folder"
trap 'rm -rf "$scratch"' EXIT
# --make builds in a copy of the suite: make writes its products beside the sources.
if [ $make_mode = 1 ]; then
    cp -r "$suite" "$scratch/suite" || die "cannot copy $suite"
fi

declare -A count=([PASS]=0 [FAIL]=0 [REFUSED]=0 [CRASH]=0 [NOREF]=0)
results=()
case "$budget" in ''|*[!0-9]*) die "--budget must be a number of seconds" ;; esac
while IFS= read -r src; do
    if [ "$budget" -gt 0 ] && [ "$SECONDS" -ge "$budget" ]; then
        echo "budget: ${budget} s spent; the programs after this one are not run" >&2
        break
    fi
    name=$(basename "$src" .c)
    if [ ${#only[@]} -gt 0 ]; then
        keep=0
        for o in "${only[@]}"; do [ "$o" = "$name" ] && keep=1; done
        [ $keep = 1 ] || continue
    fi
    dir=$(dirname "$src")
    defines=("-D${dataset}_DATASET" -DPOLYBENCH_DUMP_ARRAYS)
    while IFS= read -r size; do defines+=("$size"); done < <(polybench_forced_sizes "$src" "$dataset")
    flags=(-I "$suite/utilities" -I "$dir" "${defines[@]}")
    work="$scratch/$name"
    mkdir -p "$work"
    status= reason=
    ref_rc=0
    if ! timeout "$timeout_s" gcc -O2 -w "${flags[@]}" "$src" "$suite/utilities/polybench.c" -lm -o "$work/ref" >"$work/ref.build" 2>&1; then
        status=NOREF reason="gcc did not build it"
    elif (cd "$work" && timeout "$timeout_s" ./ref </dev/null >/dev/null 2>"$work/ref.dump") 2>/dev/null; ref_rc=$?; [ $ref_rc != 0 ]; then
        if [ $ref_rc = 124 ]; then
            status=NOREF reason="gcc's sequential build ran past ${timeout_s} s"
        elif [ $ref_rc -gt 128 ]; then
            status=NOREF reason="gcc's sequential build died of signal $((ref_rc - 128)) (a fault in the program itself)"
        else
            status=NOREF reason="gcc's sequential build exited with status $ref_rc"
        fi
    else
        if [ $make_mode = 1 ]; then
            # The program's own Makefile, with the driver as CC. Its first step runs ROSE's
            # source-to-source compiler (roseacc) into rose_NAME.c and NAME-data.c; Yosegi
            # compiles the OpenACC source itself, so OBJ names it and NAME-data.c is made empty.
            built="$scratch/suite/${dir#"$suite"/}"
            timeout "$timeout_s" make -s -C "$built" CC="$yosegi_cc" OBJ="$name.c" ACC_INC_PATH= ACC_LIB_PATH= ACC_LIBS=-lm \
                CFLAGS="-O2 -w ${defines[*]}" --eval '%-data.c: ; @: > $@' >"$work/make.log" 2>&1
            rc=$?
            if [ $rc = 0 ]; then
                (cd "$work" && env YOSEGI_DEVICE="$device" ${gpus:+YOSEGI_GPUS=$gpus} timeout "$timeout_s" "$built/$name" </dev/null >/dev/null 2>"$work/got.dump")
                rc=$?
            else
                [ $rc = 124 ] || rc=2
                cp "$work/make.log" "$work/got.dump"
            fi
        else
            # No standard input: the programs read none, and a run must not take the loop's.
            (cd "$work" && timeout "$timeout_s" "$yosegi" run -w --device "$device" "${spread[@]}" "${flags[@]}" "$src" "$suite/utilities/polybench.c" \
                </dev/null >/dev/null 2>"$work/got.dump")
            rc=$?
        fi
        if [ $rc = 0 ]; then
            diff=$(compare_dumps "$work/ref.dump" "$work/got.dump")
            if [ -z "$diff" ]; then status=PASS; else status=FAIL reason="dump differs: $diff"; fi
        else
            classify_failed_run "$rc" "$work/got.dump" "$timeout_s"
        fi
    fi
    count[$status]=$((count[$status] + 1))
    printf '%-20s %-8s %s\n' "$name" "$status" "$reason"
    results+=("$name	$status	$reason")
done < <(find "$suite" -name '*.c' -not -path '*/utilities/*' | sort)

total=$((count[PASS] + count[FAIL] + count[REFUSED] + count[CRASH] + count[NOREF]))
[ -n "$tsv" ] && printf '%s\n' "${results[@]}" | sort >"$tsv"
echo "summary: pass=${count[PASS]} fail=${count[FAIL]} refused=${count[REFUSED]} crash=${count[CRASH]} noref=${count[NOREF]} total=$total (device $device, dataset $dataset)"
