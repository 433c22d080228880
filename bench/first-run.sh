#!/usr/bin/env bash
# The first run against the tenth (issue "the first run as fast as the tenth"): each NPB-ACC
# benchmark (https://github.com/uhhpctools/openacc-npb) built by `make CC=yosegi-cc` and run
# through `yosegi run`, each time with an empty kernel cache (first), again (warm), and warm
# with YOSEGI_STATS=json / --stats=json; the times are the benchmark's own `Time in seconds`.
# Also prints each link's wall time (the kernels are compiled there, ahead of time).
#
# Usage: bench/first-run.sh SUITE BIN_DIR [CLASS [NAME...]]
#   SUITE    the clone's root (BT/, CG/, ...); it is copied, not modified
#   BIN_DIR  the folder holding yosegi and yosegi-cc (and libyosegi_rt.so)
#   CLASS    S, W, A, B or C (default C); NAME: BT CG EP FT LU MG SP (default all)
# Output: one tab-separated line per benchmark: name, link s, then first, warm and stats
# seconds of the make build, then of `yosegi run`, then the ratios first/warm (make, run)
# and stats/warm (make, run). A benchmark that does not verify shows FAIL for that time.
# NO_STATS=1 leaves out the two runs with stats (their columns read "-"). REPEAT=N makes each
# of the six runs N times, interleaved (first, warm, stats; first, warm, stats; ...: a first
# run starts from an empty cache every time) and prints the medians: launch-bound programs
# (NPB LU: 636,000 launches) vary by 20% and more from one run to the next on a shared host.
# PIN=CPU runs the programs under `taskset -c CPU`; NO_RUN=1 leaves out the `yosegi run` ones,
# NO_MAKE=1 the runs of the make build (it is still built: the link's time).
# Each run's time also goes to stderr as it ends, so that a pass cut short keeps what it measured.
# WALL=1 makes every time the process's wall seconds instead (what `--stats` must not change by
# more than 5%; NPB LU spends a third of its wall time before its timed region).
set -u
suite="$(cd "${1:?SUITE}" && pwd)"
bin="$(cd "${2:?BIN_DIR}" && pwd)"
class="${3:-C}"
shift 3 2>/dev/null || shift $#
names=("$@")
[ ${#names[@]} -gt 0 ] || names=(BT CG EP FT LU MG SP)
work="$(mktemp -d "${TMPDIR:-/tmp}/first-run.XXXXXX")"
trap 'rm -rf "$work"' EXIT
printf 'yosegi-print-objs:\n\t@echo $(OBJS)\n' >"$work/print-objs.mk"
export YOSEGI_DEVICE=cuda

wall_started=0 wall_s=0
start_wall() { wall_started=$(date +%s.%N); }
stop_wall() { wall_s=$(python3 -c "import time, sys; print(f'{time.time() - float(sys.argv[1]):.2f}')" "$wall_started"); }
seconds_of() { # the benchmark's time from its output $1 (WALL=1: the run's wall time), or FAIL when it did not verify
    if grep -qE "Verification *= *SUCCESSFUL" "$1"; then
        if [ -n "${WALL:-}" ]; then echo "$wall_s"; return; fi
        grep -m1 -E "^ *Time in seconds *=" "$1" | sed -E 's/^[^=]*= *//; s/ *$//'
    else
        echo FAIL
    fi
}
median() { python3 -c "import sys, statistics; v = sys.argv[1:]; print('FAIL' if 'FAIL' in v else ('-' if '-' in v else f'{statistics.median(map(float, v)):.2f}'))" "$@"; }
repeat="${REPEAT:-1}"
pin=()
[ -n "${PIN:-}" ] && pin=(taskset -c "$PIN")
ratio() { python3 -c "import sys; a, b = sys.argv[1:]; print(f'{float(a) / float(b):.3f}' if 'FAIL' not in (a, b) and '-' not in (a, b) else '-')" "$1" "$2"; }

printf 'bench\tlink_s\tmake_first\tmake_warm\tmake_stats\trun_first\trun_warm\trun_stats\tmake_first/warm\trun_first/warm\tmake_stats/warm\trun_stats/warm\n'
for bench in "${names[@]}"; do
    cp -r "$suite/$bench" "$work/$bench"
    top="$work/$bench"
    lower=$(echo "$bench" | tr 'A-Z' 'a-z')
    program=$(grep -l "^BENCHMARK *= *$lower" "$top"/*/Makefile 2>/dev/null | head -1)
    dir=$(dirname "$program")
    started=$(date +%s.%N)
    (cd "$dir" && make CC="$bin/yosegi-cc" CLINK="$bin/yosegi-cc" CLASS="$class" >"$top/build.log" 2>&1)
    link_s=$(python3 -c "import time, sys; print(f'{time.time() - float(sys.argv[1]):.1f}')" "$started")
    exe="$top/bin/$lower.$class.x"
    [ -x "$exe" ] || exe="$dir/$lower.$class.x"
    times=()
    if [ -n "${NO_MAKE:-}" ]; then
        times+=(- - -)
    elif [ -x "$exe" ]; then
        cache="$work/cache-$bench-make"
        first=() warm=() with_stats=()
        for ((r = 1; r <= repeat; r++)); do
            rm -rf "$cache"
            start_wall; YOSEGI_CACHE_DIR="$cache" "${pin[@]}" "$exe" >"$top/m1.out" 2>"$top/m1.err"; stop_wall; first+=("$(seconds_of "$top/m1.out")"); echo "$bench make first: $(WALL= seconds_of "$top/m1.out") s, wall ${wall_s} s" >&2
            start_wall; YOSEGI_CACHE_DIR="$cache" "${pin[@]}" "$exe" >"$top/m2.out" 2>"$top/m2.err"; stop_wall; warm+=("$(seconds_of "$top/m2.out")"); echo "$bench make warm: $(WALL= seconds_of "$top/m2.out") s, wall ${wall_s} s" >&2
            if [ -n "${NO_STATS:-}" ]; then
                with_stats+=(-)
            else
                start_wall; YOSEGI_CACHE_DIR="$cache" YOSEGI_STATS=json "${pin[@]}" "$exe" >"$top/m3.out" 2>"$top/m3.err"; stop_wall; with_stats+=("$(seconds_of "$top/m3.out")"); echo "$bench make stats: $(WALL= seconds_of "$top/m3.out") s, wall ${wall_s} s" >&2
            fi
        done
        times+=("$(median "${first[@]}")" "$(median "${warm[@]}")" "$(median "${with_stats[@]}")")
        echo "$bench make: first ${first[*]}; warm ${warm[*]}; stats ${with_stats[*]}" >&2
    else
        times+=(FAIL FAIL FAIL)
        tail -3 "$top/build.log" >&2
    fi
    (cd "$dir" && ../sys/setparams "$lower" "$class") >/dev/null 2>&1
    objs=$(make -s -C "$dir" -f Makefile -f "$work/print-objs.mk" yosegi-print-objs CLASS="$class" COMMON=../common RAND=randdp VEC= 2>/dev/null)
    sources=()
    for o in $objs; do sources+=("${o%.o}.c"); done
    cache="$work/cache-$bench-run"
    if [ -n "${NO_RUN:-}" ]; then
        times+=(- - -)
    else
        first=() warm=() with_stats=()
        for ((r = 1; r <= repeat; r++)); do
            rm -rf "$cache"
            for k in 1 2 3; do
                if [ $k = 3 ] && [ -n "${NO_STATS:-}" ]; then
                    with_stats+=(-)
                    continue
                fi
                stats=()
                [ $k = 3 ] && stats=(--stats=json)
                start_wall
                (cd "$dir" && YOSEGI_CACHE_DIR="$cache" "${pin[@]}" "$bin/yosegi" run -w --device cuda "${stats[@]}" -I ../common "${sources[@]}") </dev/null >"$top/r$k.out" 2>"$top/r$k.err"
                stop_wall
                t="$(seconds_of "$top/r$k.out")"
                echo "$bench run $k: $(WALL= seconds_of "$top/r$k.out") s, wall ${wall_s} s" >&2
                case $k in 1) first+=("$t") ;; 2) warm+=("$t") ;; 3) with_stats+=("$t") ;; esac
            done
        done
        times+=("$(median "${first[@]}")" "$(median "${warm[@]}")" "$(median "${with_stats[@]}")")
        echo "$bench run: first ${first[*]}; warm ${warm[*]}; stats ${with_stats[*]}" >&2
    fi
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$bench" "$link_s" "${times[@]}" \
        "$(ratio "${times[0]}" "${times[1]}")" "$(ratio "${times[3]}" "${times[4]}")" \
        "$(ratio "${times[2]}" "${times[1]}")" "$(ratio "${times[5]}" "${times[4]}")"
    if [ -n "${FIRST_RUN_LOGS:-}" ]; then
        mkdir -p "$FIRST_RUN_LOGS" && tar czf "$FIRST_RUN_LOGS/$bench.tgz" -C "$top" $(cd "$top" && ls ./*.out ./*.err build.log 2>/dev/null)
    fi
    rm -rf "$top" "$work/cache-$bench-make" "$work/cache-$bench-run"
done
