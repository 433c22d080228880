# Shell functions shared by the scripts that run public suites with Yosegi (npb.sh,
# polybench.sh): sourced, not run. Each script sets `script_name` before sourcing.

die() {
    echo "$script_name: $*" >&2
    exit 2
}

# Prints the usage block of the calling script (the comment lines from `# Usage:` up to, not
# including, the line starting with `# $1`) and exits: status 0 with `usage_and_exit help ...`
# (to stdout), 2 otherwise (to stderr).
usage_and_exit() {
    local how=$1 until=$2 script=$3
    local text
    text=$(sed -n "/^# Usage:/,/^# $until/p" "$script" | sed '$d; s/^# \{0,1\}//')
    if [ "$how" = help ]; then echo "$text"; exit 0; fi
    echo "$text" >&2
    exit 2
}

# The absolute path of the yosegi binary $1, or a usage error.
resolve_yosegi() {
    [ -x "$1" ] || die "no yosegi binary at $1 (build it with: cargo build --release)"
    echo "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
}

# The first diagnostic `error: ...` line of file $1, without its prefix, at most 160 characters.
first_error() {
    grep -m1 -E '^(yosegi: )?error' "$1" | sed -E 's/^(yosegi: )?error(\[[^]]*\])?: //' | cut -c1-160
}

# Sets `status` and `reason` for a `yosegi run` that did not succeed: exit status $1, its stderr
# in file $2, the time limit $3 (seconds). CRASH: a panic, the time limit, a signal; REFUSED:
# exit status 2; FAIL: any other status.
classify_failed_run() {
    local rc=$1 err=$2 limit=$3
    if grep -q "panicked at" "$err"; then
        status=CRASH reason="panic: $(grep -m1 'panicked at' "$err" | cut -c1-160)"
    elif [ "$rc" = 124 ]; then
        status=CRASH reason="over the ${limit}s limit"
    elif [ "$rc" -gt 128 ]; then
        status=CRASH reason="killed by signal $((rc - 128))"
    elif [ "$rc" = 2 ]; then
        status=REFUSED reason=$(first_error "$err")
    else
        status=FAIL reason="exit status $rc: $(first_error "$err")"
    fi
}

# Reads the options every suite script takes, into the caller's variables: `--device`
# (device), `--gpus N` or `--ranks N` (the array spread, the words added to `yosegi run`),
# `--only` (the array only), `--timeout` (timeout_s), `--tsv` (tsv), `-h`/`--help`;
# `--NAME VALUE` for each NAME in the caller's array `extra_options` goes to the variable NAME;
# other words go to the array `positional`. Then checks the common values.
parse_suite_options() {
    local name known
    spread=()
    while [ $# -gt 0 ]; do
        case "$1" in
            -h|--help) usage help ;;
            --device|--gpus|--ranks|--only|--timeout|--tsv) [ $# -ge 2 ] || die "$1 needs a value" ;;
        esac
        case "$1" in
            --device) device=$2; shift 2 ;;
            --gpus|--ranks) spread=("$1" "$2"); shift 2 ;;
            --only) only+=("$2"); shift 2 ;;
            --timeout) timeout_s=$2; shift 2 ;;
            --tsv) tsv=$2; shift 2 ;;
            --*)
                known=
                for name in "${extra_options[@]}"; do [ "$1" = "--$name" ] && known=$name; done
                [ -n "$known" ] || die "unknown option $1 (see --help)"
                [ $# -ge 2 ] || die "$1 needs a value"
                printf -v "$known" '%s' "$2"
                shift 2 ;;
            -*) die "unknown option $1 (see --help)" ;;
            *) positional+=("$1"); shift ;;
        esac
    done
    case "$device" in sim|cuda) ;; *) die "--device must be sim or cuda" ;; esac
    case "$timeout_s" in ''|*[!0-9]*) die "--timeout must be a number of seconds" ;; esac
    if [ ${#spread[@]} -gt 0 ]; then
        case "${spread[1]}" in ''|*[!0-9]*|0*) die "${spread[0]} needs a positive number, not \`${spread[1]}\`" ;; esac
    fi
    [ ${#positional[@]} -ge 1 ] && [ ${#positional[@]} -le 2 ] || usage
}
