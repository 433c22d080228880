#!/usr/bin/env bash
# Runs the C tests of the OpenACC Validation & Verification suite
# (https://github.com/OpenACCUserGroup/OpenACCV-V) with `yosegi run` and tallies the results.
# The suite is not part of this repository and this script fetches nothing: clone it yourself
# (see docs/CONFORMANCE.md) and point the script at the clone.
#
# Usage:
#   scripts/conformance.sh [options] SUITE [YOSEGI]
#     SUITE    the suite's folder: the clone's root or its Tests/ folder
#     YOSEGI   the yosegi binary (default: target/release/yosegi of this repository)
#   --device sim|cuda   the device the tests run on (default sim)
#   --gpus N            each test on N devices of one process (`yosegi run --gpus N`)
#   --ranks N           each test as N MPI ranks (`yosegi run --ranks N`; needs mpirun)
#   --jobs N            tests run at once (default: the number of CPUs)
#   --only GLOB         only the tests whose name (without .c) matches the shell pattern GLOB,
#                       e.g. 'parallel_loop_*'; may be given several times
#   --timeout SECS      per-test time limit, compilation included (default 60)
#   --tsv FILE          writes one line per test: name, status, reason (tab-separated, sorted
#                       by name), for diffing two runs
#   --logs DIR          keeps the stdout and stderr of every test that did not pass as DIR/NAME.log
#
# Each Tests/NAME.c is built and run as the suite's own infrastructure does by default (every
# subtest of the file, no -D macro): `yosegi run --device DEV -I Tests Tests/NAME.c`. A test
# self-checks: main returns 0 on success, else a bit mask of its failed subtests (by the
# suite's convention bit k-1 for subtest Tk; a few tests use other bits, so the reason prints
# the bits as the subtests the convention names: "failcode bits of T1 T3"). Statuses:
#   PASS     exit status 0
#   FAIL     the program ran and failed: non-zero status, a kernel fault, a wrong answer
#   REFUSED  exit status 2 with a diagnostic (the first `error:` line is the reason)
#   CRASH    killed by a signal, a panic (`panicked at`), or the time limit
#   LOADER   the program's host code could not be loaded or linked (`undefined symbol`): a
#            function of the OpenACC API or of C the runtime does not provide
# Prints the counts, the refusals grouped by reason (file names, line numbers and program
# identifiers taken out), the missing symbols, and every failing and crashing test with a reason.
# Also prints one machine-readable line: `summary: pass=N fail=N refused=N crash=N loader=N total=N`.
# Exit status: 0 when the run completed (whatever the tests did), 2 on a usage error.
set -u

usage() { # exit status: 0 for --help, 2 for a usage error
    local status=${1:-2}
    if [ "$status" -eq 0 ]; then
        sed -n '/^# Usage:/,/^# Each Tests/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'
    else
        sed -n '/^# Usage:/,/^# Each Tests/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//' >&2
    fi
    exit "$status"
}
die() {
    echo "conformance: $*" >&2
    exit 2
}

# ---------------------------------------------------------------------------------------------
# One test (the workers call the script again with `__one TEST.c`; the settings come through
# the environment). Writes "STATUS<TAB>REASON" to $CONF_SCRATCH/res/NAME.
# ---------------------------------------------------------------------------------------------

# The first diagnostic line `error: ...` (or `yosegi: error: ...`) of FILE, without the prefix.
# When it ends with a colon (the system C compiler's output follows), the first message of that
# compiler's own `FILE:LINE:COL: error: ...` lines is appended.
first_error() {
    local line cc
    line=$(sed -n -E 's/^(yosegi: )?error(\[[^]]*\])?: //p' "$1" | head -n 1)
    case "$line" in
        *:)
            cc=$(sed -n -E 's/^[^ :]+:[0-9]+(:[0-9]+)?: (fatal )?error: //p' "$1" | head -n 1)
            [ -z "$cc" ] || line="$line $cc"
            ;;
    esac
    printf '%s\n' "$line"
}

# Bits of a failcode as the suite's subtests: 5 -> "T1 T3".
subtests_of() {
    local code=$1 bit=1 names=""
    while [ "$code" -gt 0 ] && [ "$bit" -le 62 ]; do
        if [ $((code & 1)) -eq 1 ]; then names="$names T$bit"; fi
        code=$((code >> 1))
        bit=$((bit + 1))
    done
    echo "${names# }"
}

run_one() {
    local src=$1 name dir rc started elapsed status reason sig code
    name=$(basename "$src" .c)
    dir="$CONF_SCRATCH/work/$name"
    mkdir -p "$dir/tmp"
    started=$SECONDS
    # The test's own scratch (yosegi's build folder included) stays inside $dir, so a test
    # killed by the time limit leaves nothing behind.
    # `timeout` puts itself in a process group of its own; its pid is kept so that the driver
    # can stop it when the run is interrupted.
    (cd "$dir" && TMPDIR="$dir/tmp" exec timeout -k 10 "$CONF_TIMEOUT" \
        "$CONF_YOSEGI" run --device "$CONF_DEVICE" $CONF_SPREAD -I "$CONF_TESTS" "$src" \
        </dev/null >"$dir/stdout" 2>"$dir/stderr") &
    echo $! >"$dir/pid"
    wait $!
    rc=$?
    elapsed=$((SECONDS - started))
    local err="$dir/stderr"
    if [ "$rc" -eq 124 ] || { [ "$rc" -eq 137 ] && [ "$elapsed" -ge "$CONF_TIMEOUT" ]; }; then
        status=CRASH reason="timeout after ${CONF_TIMEOUT}s"
    elif grep -q 'panicked at' "$err"; then
        # `thread 'main' panicked at src/x.rs:1:2:` then the message on the next line.
        status=CRASH
        reason=$(awk '/panicked at/ { sub(/.*panicked at /, ""); sub(/:$/, ""); where = $0; getline msg; print "panic at " where ": " msg; exit }' "$err")
    elif grep -q -E 'undefined symbol|symbol lookup error|cannot load the program' "$err"; then
        status=LOADER
        reason=$(grep -o -E 'undefined symbol: [A-Za-z_][A-Za-z0-9_]*' "$err" | head -n 1)
        [ -n "$reason" ] || reason=$(grep -m 1 -E 'symbol lookup error|cannot load the program' "$err" | sed -E 's/^.*(symbol lookup error|cannot load)/\1/')
    elif [ "$rc" -gt 128 ] && [ "$rc" -le 192 ]; then
        sig=$(kill -l $((rc - 128)) 2>/dev/null || echo $((rc - 128)))
        status=CRASH reason="killed by signal SIG${sig#SIG}"
    elif [ "$rc" -eq 0 ]; then
        status=PASS reason=""
    elif [ "$rc" -eq 2 ] && [ -n "$(first_error "$err")" ]; then
        status=REFUSED reason=$(first_error "$err")
    else
        status=FAIL
        reason=$(first_error "$err")
        if [ -z "$reason" ]; then
            code=$(sed -n -E 's/^yosegi: the program exited with status (-?[0-9]+)$/\1/p' "$err" | tail -n 1)
            if [ -n "$code" ] && [ "$code" -gt 0 ] 2>/dev/null; then
                reason="main returned $code (failcode bits of $(subtests_of "$code"))"
            elif [ -n "$code" ]; then
                reason="main returned $code"
            else
                reason="exit status $rc"
            fi
        fi
    fi
    # One line, no tabs, bounded.
    reason=$(printf '%s' "$reason" | tr '\t\r\n' '   ' | cut -c 1-240)
    printf '%s\t%s\n' "$status" "$reason" >"$CONF_SCRATCH/res/$name"
    if [ "$status" != PASS ] && [ -n "$CONF_LOGS" ]; then
        {
            echo "# yosegi run --device $CONF_DEVICE${CONF_SPREAD:+ $CONF_SPREAD} -I $CONF_TESTS $src"
            echo "# exit status $rc after ${elapsed}s: $status $reason"
            echo "# --- stdout ---"
            head -c 65536 "$dir/stdout"
            echo "# --- stderr ---"
            head -c 65536 "$err"
        } >"$CONF_LOGS/$name.log"
    fi
    rm -rf "$dir"
}

if [ "${1:-}" = __one ]; then
    run_one "$2"
    exit 0
fi

# ---------------------------------------------------------------------------------------------
# The driver.
# ---------------------------------------------------------------------------------------------

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
device=sim
jobs=$(nproc 2>/dev/null || echo 2)
timeout_s=60
tsv=""
logs=""
spread=""
only=()
positional=()
while [ $# -gt 0 ]; do
    case "$1" in
        --device) [ $# -ge 2 ] || usage; device=$2; shift 2 ;;
        --device=*) device=${1#*=}; shift ;;
        --jobs|-j) [ $# -ge 2 ] || usage; jobs=$2; shift 2 ;;
        --jobs=*) jobs=${1#*=}; shift ;;
        --only) [ $# -ge 2 ] || usage; only+=("$2"); shift 2 ;;
        --only=*) only+=("${1#*=}"); shift ;;
        --gpus|--ranks) [ $# -ge 2 ] || usage; spread="$1 $2"; shift 2 ;;
        --timeout) [ $# -ge 2 ] || usage; timeout_s=$2; shift 2 ;;
        --timeout=*) timeout_s=${1#*=}; shift ;;
        --tsv) [ $# -ge 2 ] || usage; tsv=$2; shift 2 ;;
        --tsv=*) tsv=${1#*=}; shift ;;
        --logs) [ $# -ge 2 ] || usage; logs=$2; shift 2 ;;
        --logs=*) logs=${1#*=}; shift ;;
        -h|--help) usage 0 ;;
        --) shift; positional+=("$@"); break ;;
        -*) echo "conformance: unknown option $1" >&2; usage ;;
        *) positional+=("$1"); shift ;;
    esac
done
[ "${#positional[@]}" -ge 1 ] && [ "${#positional[@]}" -le 2 ] || usage
case "$device" in sim|cuda) ;; *) die "--device must be sim or cuda, not \`$device\`" ;; esac
[[ "$jobs" =~ ^[1-9][0-9]*$ ]] || die "--jobs needs a positive number, not \`$jobs\`"
[[ "$timeout_s" =~ ^[1-9][0-9]*$ ]] || die "--timeout needs a positive number of seconds, not \`$timeout_s\`"
[ -z "$spread" ] || [[ "${spread#* }" =~ ^[1-9][0-9]*$ ]] || die "${spread%% *} needs a positive number, not \`${spread#* }\`"
for tool in timeout xargs awk sed sort; do
    command -v "$tool" >/dev/null 2>&1 || die "$tool is needed and is not on PATH"
done

suite=${positional[0]}
if [ -f "$suite/Tests/acc_testsuite.h" ]; then
    tests_dir=$suite/Tests
elif [ -f "$suite/acc_testsuite.h" ]; then
    tests_dir=$suite
else
    die "$suite holds neither Tests/acc_testsuite.h nor acc_testsuite.h: not the OpenACC V&V suite (git clone https://github.com/OpenACCUserGroup/OpenACCV-V)"
fi
tests_dir=$(cd "$tests_dir" && pwd)
yosegi=${positional[1]:-$root/target/release/yosegi}
[ -x "$yosegi" ] || die "no yosegi binary at $yosegi (build it with: cargo build --release)"
yosegi=$(cd "$(dirname "$yosegi")" && pwd)/$(basename "$yosegi")
if [ -n "$logs" ]; then
    mkdir -p "$logs" || die "cannot create $logs"
    logs=$(cd "$logs" && pwd)
fi
if [ -n "$tsv" ]; then
    : >"$tsv" 2>/dev/null || die "cannot write $tsv"
fi
if [ "$device" = cuda ]; then
    # NVRTC and its builtins library are found through the loader's path.
    for dir in "${CUDA_HOME:-/usr/local/cuda}/lib64" /usr/local/cuda/lib64; do
        if [ -d "$dir" ]; then
            export LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
            break
        fi
    done
fi

scratch=$(mktemp -d "${TMPDIR:-/tmp}/yosegi-conformance.XXXXXX") || die "mktemp failed"
workers=""
cleanup() {
    if [ -n "$workers" ]; then
        # Interrupted: stop xargs, then every test still running (each through its `timeout`,
        # which passes the signal on to yosegi).
        kill "$workers" 2>/dev/null
        wait "$workers" 2>/dev/null
        for pidfile in "$scratch"/work/*/pid; do
            [ -f "$pidfile" ] && kill "$(cat "$pidfile")" 2>/dev/null
        done
        sleep 1
    fi
    rm -rf "$scratch"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
mkdir -p "$scratch/res" "$scratch/work"

# The test list: Tests/*.c, filtered by --only.
: >"$scratch/list"
count=0
shopt -s nullglob
for src in "$tests_dir"/*.c; do
    name=$(basename "$src" .c)
    if [ "${#only[@]}" -gt 0 ]; then
        keep=0
        for pattern in "${only[@]}"; do
            # shellcheck disable=SC2053 # the pattern is a glob on purpose
            if [[ "$name" == $pattern ]]; then keep=1; break; fi
        done
        [ "$keep" -eq 1 ] || continue
    fi
    printf '%s\0' "$src" >>"$scratch/list"
    count=$((count + 1))
done
shopt -u nullglob
[ "$count" -gt 0 ] || die "no test in $tests_dir matches"

version=$("$yosegi" --version 2>/dev/null | head -n 1)
echo "OpenACC V&V: $count C tests from $tests_dir"
echo "yosegi: $yosegi (${version:-version unknown}), --device $device${spread:+ $spread}, $jobs jobs, ${timeout_s}s per test"

export CONF_SCRATCH="$scratch" CONF_YOSEGI="$yosegi" CONF_DEVICE="$device" CONF_TESTS="$tests_dir" \
    CONF_TIMEOUT="$timeout_s" CONF_LOGS="$logs" CONF_SPREAD="$spread"
started=$SECONDS
xargs -0 -n 1 -P "$jobs" bash "${BASH_SOURCE[0]}" __one <"$scratch/list" &
workers=$!
# Progress on stderr when it is a terminal (a line redrawn every second, cleared at the end);
# nothing on a pipe or in a file (YOSEGI_PROGRESS=off turns it off on a terminal too).
progress=""
[ -t 2 ] && [ "${YOSEGI_PROGRESS:-}" != off ] && progress=1
while kill -0 "$workers" 2>/dev/null; do
    sleep 1
    if [ -n "$progress" ]; then
        printf '\rconformance: %d/%d done (%ds)' "$(find "$scratch/res" -type f | wc -l)" "$count" "$((SECONDS - started))" >&2
    fi
done
[ -n "$progress" ] && printf '\r\033[K' >&2
wait "$workers"
workers=""

# Collect: NAME<TAB>STATUS<TAB>REASON, sorted by name. A test whose worker left no result (it
# was killed from outside) counts as a crash.
while IFS= read -r -d '' src; do
    name=$(basename "$src" .c)
    if [ -f "$scratch/res/$name" ]; then
        printf '%s\t%s\n' "$name" "$(cat "$scratch/res/$name")"
    else
        printf '%s\tCRASH\tno result (the worker was killed)\n' "$name"
    fi
done <"$scratch/list" | LC_ALL=C sort >"$scratch/results.tsv"
[ -z "$tsv" ] || cp "$scratch/results.tsv" "$tsv"

# The group of a refusal: its reason with what is particular to one program taken out. Quoted
# words that are OpenACC or C vocabulary stay (they say what is unsupported); other quoted text
# (the program's identifiers and expressions) becomes `…`; numbers become N.
normalise_reasons() {
    awk -F '\t' '
    BEGIN {
        split("acc parallel kernels serial loop data enter exit update host self device atomic read write capture routine seq wait host_data declare cache init shutdown set if copy copyin copyout create present delete deviceptr attach detach no_create private firstprivate reduction collapse gang worker vector independent auto num_gangs num_workers vector_length async default none finalize if_present tile device_type dtype bind nohost use_device device_resident link present_or_copy present_or_copyin present_or_copyout present_or_create pcopy pcopyin pcopyout pcreate default_async device_num wait_all static struct union enum typedef sizeof _Complex complex double float int long short char unsigned signed void const volatile restrict for while do break continue return goto switch case extern inline _Bool bool", words, " ")
        for (i in words) vocab[words[i]] = 1
    }
    {
        r = $3
        out = ""
        # Backquoted pieces: keep vocabulary, hide the rest. A piece after "reduction on" names
        # a variable, whatever its name.
        while (match(r, /`[^`]*`/)) {
            piece = substr(r, RSTART + 1, RLENGTH - 2)
            before = substr(r, 1, RSTART - 1)
            variable = before ~ /reduction on $/
            keep = (piece in vocab || piece ~ /^#pragma /) && !variable
            out = out before (keep ? "`" piece "`" : "`…`")
            r = substr(r, RSTART + RLENGTH)
        }
        r = out r
        # The C compiler quotes identifiers in typographic quotes.
        gsub(/‘[^’]*’/, "‘…’", r)
        gsub(/\047[^\047]*\047/, "\047…\047", r)
        # Region names (function_lLINE), file positions, numbers.
        gsub(/\([A-Za-z_][A-Za-z0-9_]*_l[0-9]+\)/, "(…)", r)
        gsub(/[A-Za-z0-9_.\/-]+\.(c|h):[0-9]+(:[0-9]+)?/, "FILE", r)
        gsub(/[0-9]+/, "N", r)
        print $1 "\t" r
    }'
}

awk -F '\t' -v dev="$device" -v secs=$((SECONDS - started)) '
    { n[$2]++; total++ }
    END {
        printf "\nresults (--device %s, %d s)\n", dev, secs
        printf "  %-8s %5s\n", "status", "tests"
        split("PASS FAIL REFUSED CRASH LOADER", order, " ")
        for (i = 1; i <= 5; i++) printf "  %-8s %5d\n", order[i], n[order[i]]
        printf "  %-8s %5d\n", "total", total
        printf "summary: pass=%d fail=%d refused=%d crash=%d loader=%d total=%d\n", n["PASS"], n["FAIL"], n["REFUSED"], n["CRASH"], n["LOADER"], total
    }' "$scratch/results.tsv"

# Groups of NAME<TAB>KEY lines on stdin: "count  key  (a, b, +N more)", biggest first.
print_groups() {
    awk -F '\t' '
    {
        if (!($2 in count)) keys[++nkeys] = $2
        count[$2]++
        if (count[$2] <= 3) names[$2] = names[$2] (count[$2] > 1 ? ", " : "") $1
    }
    END {
        for (i = 1; i <= nkeys; i++) {
            k = keys[i]
            more = count[k] > 3 ? sprintf(", +%d more", count[k] - 3) : ""
            printf "%d\t  %4d  %s  (%s%s)\n", count[k], count[k], k, names[k], more
        }
    }' | LC_ALL=C sort -t "$(printf '\t')" -k1,1nr -s | cut -f 2-
}

refused=$(awk -F '\t' '$2 == "REFUSED"' "$scratch/results.tsv" | normalise_reasons)
if [ -n "$refused" ]; then
    echo
    echo "refused, by reason ($(printf '%s\n' "$refused" | cut -f 2 | sort -u | wc -l) reasons):"
    printf '%s\n' "$refused" | print_groups
fi
loader=$(awk -F '\t' -v OFS='\t' '$2 == "LOADER" { print $1, $3 }' "$scratch/results.tsv")
if [ -n "$loader" ]; then
    echo
    echo "loader errors, by missing symbol:"
    printf '%s\n' "$loader" | print_groups
fi
for status in FAIL CRASH; do
    list=$(awk -F '\t' -v s="$status" '$2 == s { printf "  %-50s %s\n", $1, $3 }' "$scratch/results.tsv")
    if [ -n "$list" ]; then
        echo
        echo "$(echo "$status" | tr '[:upper:]' '[:lower:]'):"
        printf '%s\n' "$list"
    fi
done
[ -z "$tsv" ] || echo "per-test results: $tsv"
exit 0
