#!/usr/bin/env bash
# Builds GCC's OpenACC peers of the public suites Yosegi runs: the NAS Parallel Benchmarks in
# OpenACC C (https://github.com/uhhpctools/openacc-npb: BT CG EP FT LU MG SP) and, optionally,
# the OpenACC programs of PolyBench-ACC (https://github.com/cavazos-lab/PolyBench-ACC), with
# `gcc-12 -fopenacc -foffload=nvptx-none`; then runs them on a GPU machine that has no gcc-12.
# Fetches nothing: clone the suites yourself and give their folders. The clones are not modified:
# each NPB benchmark is copied into a scratch folder and built there by its own Makefile, with
# CC, CFLAGS, CLINK, CLINKFLAGS and UCC given on make's command line: CFLAGS = CLINKFLAGS =
# `-O3 -mcmodel=medium -fgnu89-inline -fopenacc -foffload=nvptx-none -foffload-options=-lm`
# (the suite's gcc flags; the device code's libm; EP's C89-style `inline`).
#
# Usage:
#   bench/npb-gcc.sh build NPB_DIR OUT_DIR [options]
#     NPB_DIR  the openacc-npb clone's root (the folder holding BT/, CG/, ...)
#     OUT_DIR  where the binaries go (created; what was there is replaced)
#   --classes "B C"      the NPB problem classes, S W A B C D (default "B C")
#   --only NAME          only this NPB benchmark or PolyBench program; may be given several times
#   --polybench PB_DIR   also builds PolyBench-ACC (the clone's root or its OpenACC/ folder)
#   --dataset NAME       PolyBench's MINI, SMALL, STANDARD, LARGE or EXTRALARGE (default STANDARD)
#   --cc COMPILER        the GCC with nvptx offloading (default gcc-12)
#   --isa SM             passes -misa=SM to the nvptx compiler, e.g. sm_80 (default: GCC's own)
#
#   bench/npb-gcc.sh run OUT_DIR [options]
#   --timeout SECS       time limit of each run (default 1800)
#   --only NAME          only this NPB benchmark or PolyBench program; may be given several times
#   --device nvidia|host sets ACC_DEVICE_TYPE (default nvidia: the run stops when libgomp finds
#                        no GPU instead of falling back to the host; host is for testing)
#   --tsv FILE           the table as TSV (default OUT_DIR/results.tsv)
#   --logs DIR           each run's output (default OUT_DIR/logs)
#
# `build` writes OUT_DIR/bin/NAME.CLASS.x (NPB's own names: bt.B.x, ...), OUT_DIR/bin/acc-probe.x
# (prints the device libgomp picks and whether a kernel ran on it), OUT_DIR/lib/libgomp.so.1 and
# libgomp-plugin-nvptx.so.1 (the compiler's own, copied; the GPU machine needs only its CUDA
# driver), OUT_DIR/polybench/NAME.x and NAME.ref.x (gcc -O2 without -fopenacc: the reference),
# OUT_DIR/build.tsv (suite, name, class or dataset, ok or FAIL, bytes, first error) and a copy of
# this script as OUT_DIR/npb-gcc.sh with scripts/polybench-lib.sh beside it, which need only bash,
# coreutils, grep, paste and awk.
# PolyBench is built as `-I utilities -I DIR -D<DATASET>_DATASET -DPOLYBENCH_DUMP_ARRAYS
# -DPOLYBENCH_TIME DIR/NAME.c utilities/polybench.c -lm` (scripts/polybench.sh's build, sizes
# forced as it does, plus the kernel's time on stdout), the OpenACC one with -O3 -fopenacc
# -foffload=nvptx-none -foffload-options=-lm -Wl,--no-as-needed.
#
# `run` runs acc-probe.x first and prints the device, then each NPB binary with
# LD_LIBRARY_PATH=OUT_DIR/lib and `ulimit -s unlimited` (BT and SP need a large stack):
#   PASS     it printed `Verification    =  SUCCESSFUL`
#   FAIL     it ran and did not verify, or exited non-zero (the reason says which)
#   CRASH    killed by a signal or the time limit
#   NOBUILD  the build had failed
# then each PolyBench program and its reference, whose stderr dumps must agree number by number
# (within 1e-6 relative, or the last printed digit; scripts/polybench.sh's rule), with the same
# statuses and NOREF when the reference did not run. Prints one line per run and a summary line
# per suite. Exit status: 0 when the run completed (whatever the programs did), 1 when
# --device nvidia and the probe found no GPU, 2 on a usage error.
set -u
die() { echo "npb-gcc: $*" >&2; exit 2; }
usage() { sed -n '/^# Usage:/,/^# `build` writes/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2; }

benches=(BT CG EP FT LU MG SP)

# The probe: which device libgomp initialises, and whether a compute region runs on it.
probe_source() {
    cat <<'EOF'
#include <stdio.h>
#include <openacc.h>
int main(void)
{
    int on_device = 0;
#pragma acc parallel num_gangs(1) copyout(on_device)
    on_device = !acc_on_device(acc_device_host);
    acc_device_t type = acc_get_device_type();
    printf("device_type=%s\n", type == acc_device_nvidia ? "nvidia" : type == acc_device_host ? "host" : "other");
    printf("nvidia_devices=%d\n", acc_get_num_devices(acc_device_nvidia));
    printf("kernel_ran_on=%s\n", on_device ? "device" : "host");
    if (type == acc_device_nvidia) {
        int n = acc_get_device_num(acc_device_nvidia);
        const char *name = acc_get_property_string(n, acc_device_nvidia, acc_property_name);
        const char *driver = acc_get_property_string(n, acc_device_nvidia, acc_property_driver);
        size_t memory = acc_get_property(n, acc_device_nvidia, acc_property_memory);
        printf("name=%s\ndriver=%s\nmemory_mib=%zu\n", name ? name : "?", driver ? driver : "?", memory >> 20);
    }
    return 0;
}
EOF
}

keep() { # whether $1 passes the --only filter
    [ ${#only[@]} -eq 0 ] && return 0
    local o
    for o in "${only[@]}"; do [ "$o" = "$1" ] && return 0; done
    return 1
}

first_error() { # the first error line of build log $1, at most 160 characters
    { grep -m1 -E '(^|: )(fatal )?error:|unresolved symbol|undefined reference' "$1" || tail -n1 "$1"; } \
        | sed -E 's|^[^ :]*/([^/ :]+:[0-9])|\1|' | tr '\t' ' ' | cut -c1-160
}

do_build() {
    local lib_sh
    lib_sh="$(dirname "${BASH_SOURCE[0]}")/../scripts/polybench-lib.sh"
    # shellcheck source=../scripts/polybench-lib.sh
    . "$lib_sh"
    local npb= out= classes="B C" pb= dataset=STANDARD cc=gcc-12 isa= positional=()
    while [ $# -gt 0 ]; do
        case "$1" in
            --classes|--only|--polybench|--dataset|--cc|--isa) [ $# -ge 2 ] || die "$1 needs a value" ;;
        esac
        case "$1" in
            --classes) classes=$2; shift 2 ;;
            --only) only+=("$2"); shift 2 ;;
            --polybench) pb=$2; shift 2 ;;
            --dataset) dataset=$2; shift 2 ;;
            --cc) cc=$2; shift 2 ;;
            --isa) isa=$2; shift 2 ;;
            -h|--help) usage ;;
            -*) die "unknown option $1 (see --help)" ;;
            *) positional+=("$1"); shift ;;
        esac
    done
    [ ${#positional[@]} -eq 2 ] || usage
    npb=${positional[0]} out=${positional[1]}
    [ -d "$npb/CG/sys" ] || die "$npb has no CG/sys/ folder: give the root of the openacc-npb clone"
    npb="$(cd "$npb" && pwd)"
    for c in $classes; do case "$c" in S|W|A|B|C|D) ;; *) die "--classes takes S W A B C D" ;; esac; done
    case "$dataset" in MINI|SMALL|STANDARD|LARGE|EXTRALARGE) ;; *) die "--dataset must be MINI, SMALL, STANDARD, LARGE or EXTRALARGE" ;; esac
    if [ -n "$pb" ]; then
        [ -d "$pb/OpenACC" ] && pb="$pb/OpenACC"
        [ -f "$pb/utilities/polybench.c" ] || die "$pb has no utilities/polybench.c: give the PolyBench-ACC clone or its OpenACC/ folder"
        pb="$(cd "$pb" && pwd)"
    fi
    command -v "$cc" >/dev/null || die "$cc is needed (the package gcc-12-offload-nvptx)"
    command -v make >/dev/null || die "make is needed"
    # -foffload-options=-lm: the device code's sqrt, sincos, ... come from the nvptx libm.
    local acc=(-fopenacc -foffload=nvptx-none -foffload-options=-lm)
    [ -n "$isa" ] && acc+=("-foffload-options=nvptx-none=-misa=$isa")

    mkdir -p "$out" || die "cannot create $out"
    out="$(cd "$out" && pwd)"
    rm -rf "$out/bin" "$out/lib" "$out/polybench" "$out/logs" "$out/build.tsv" "$out/results.tsv"
    mkdir -p "$out/bin" "$out/lib" "$out/logs"
    # (global: the EXIT trap reads it)
    scratch=$(mktemp -d -t npb-gcc.XXXXXX) || die "cannot create a scratch folder"
    trap 'rm -rf "$scratch"' EXIT

    # The probe doubles as the check that offloading works at all.
    probe_source >"$scratch/acc-probe.c"
    "$cc" -O2 "${acc[@]}" "$scratch/acc-probe.c" -o "$out/bin/acc-probe.x" >"$scratch/probe.log" 2>&1 \
        || { cat "$scratch/probe.log" >&2; die "$cc ${acc[*]} cannot build a small OpenACC program"; }
    local lib real
    for lib in libgomp.so.1 libgomp-plugin-nvptx.so.1; do
        real=$(readlink -f "$("$cc" -print-file-name="$lib")")
        [ -f "$real" ] || die "$cc has no $lib"
        cp "$real" "$out/lib/$lib"
    done
    cp "$0" "$out/npb-gcc.sh"
    cp "$lib_sh" "$out/polybench-lib.sh"
    {
        echo "compiler: $("$cc" --version | head -1)"
        echo "npb flags: -O3 -mcmodel=medium -fgnu89-inline ${acc[*]}"
        echo "polybench flags: -O3 ${acc[*]} -Wl,--no-as-needed (reference: -O2), dataset $dataset"
        echo "built: $(date -u '+%Y-%m-%d %H:%M UTC')"
    } >"$out/build-info.txt"

    # -fgnu89-inline: EP calls its `inline` randlc_ep where GCC does not inline it, and C99 gives
    # such a definition no external symbol (the suite was written for PGI and OpenUH).
    local flags="-O3 -mcmodel=medium -fgnu89-inline ${acc[*]}"
    local bench class lower top program dir exe status bytes reason rows=()
    for class in $classes; do
        for bench in "${benches[@]}"; do
            keep "$bench" || continue
            [ -d "$npb/$bench" ] || continue
            lower=$(echo "$bench" | tr 'A-Z' 'a-z')
            top="$scratch/$bench.$class"
            cp -r "$npb/$bench" "$top"
            rm -f "$top/sys/setparams" # the clone may hold a prebuilt one; build it with $cc
            # The program folder: the one whose Makefile names the benchmark (BT/BT, LU/LU-HP, ...).
            program=$(grep -l "^BENCHMARK *= *$lower" "$top"/*/Makefile 2>/dev/null | head -1)
            status=FAIL bytes=0 reason=
            log="$out/logs/$lower.$class.build.log"
            if [ -z "$program" ]; then
                reason="no Makefile with BENCHMARK=$lower under $bench/"
                : >"$log"
            else
                dir=$(dirname "$program")
                exe="$dir/$lower.$class.x"
                make -C "$dir" CLASS="$class" CC="$cc" UCC="$cc" CLINK="$cc" \
                    CFLAGS="$flags" CLINKFLAGS="$flags" >"$log" 2>&1
                if [ -f "$exe" ]; then
                    cp "$exe" "$out/bin/$lower.$class.x"
                    status=ok bytes=$(stat -c %s "$exe")
                else
                    reason=$(first_error "$log")
                fi
            fi
            rm -rf "$top"
            printf '%-4s %s %-5s %9s bytes  %s\n' "$bench" "$class" "$status" "$bytes" "$reason"
            rows+=("npb	$bench	$class	$status	$bytes	$reason")
        done
    done

    if [ -n "$pb" ]; then
        mkdir -p "$out/polybench"
        local src name pflags size
        while IFS= read -r src; do
            name=$(basename "$src" .c)
            keep "$name" || continue
            dir=$(dirname "$src")
            pflags=(-w -I "$pb/utilities" -I "$dir" "-D${dataset}_DATASET" -DPOLYBENCH_DUMP_ARRAYS -DPOLYBENCH_TIME)
            while IFS= read -r size; do pflags+=("$size"); done < <(polybench_forced_sizes "$src" "$dataset")
            status=FAIL bytes=0 reason=
            log="$out/logs/$name.build.log"
            # --no-as-needed: where GCC drops every compute region (convolution-3d's print_array
            # never ends, so its result is dead), the offload table still needs libgomp.
            if ! "$cc" -O3 "${acc[@]}" "${pflags[@]}" -Wl,--no-as-needed "$src" "$pb/utilities/polybench.c" -lm -o "$out/polybench/$name.x" >"$log" 2>&1; then
                reason=$(first_error "$log")
                rm -f "$out/polybench/$name.x"
            elif ! "$cc" -O2 "${pflags[@]}" "$src" "$pb/utilities/polybench.c" -lm -o "$out/polybench/$name.ref.x" >>"$log" 2>&1; then
                reason="the reference: $(first_error "$log")"
                rm -f "$out/polybench/$name.ref.x"
                status=ok bytes=$(stat -c %s "$out/polybench/$name.x")
            else
                status=ok bytes=$(stat -c %s "$out/polybench/$name.x")
            fi
            printf '%-20s %-8s %-5s %9s bytes  %s\n' "$name" "$dataset" "$status" "$bytes" "$reason"
            rows+=("polybench	$name	$dataset	$status	$bytes	$reason")
        done < <(find "$pb" -name '*.c' -not -path '*/utilities/*' | sort)
    fi

    find "$out/logs" -name '*.build.log' -size 0 -delete
    { printf 'suite\tname\tclass\tbuild\tbytes\terror\n'; [ ${#rows[@]} -gt 0 ] && printf '%s\n' "${rows[@]}"; } >"$out/build.tsv"
    echo "built into $out: $(du -sh "$out" | cut -f1) in all"
}

# ------------------------------------------------------------------------------------------ run

# Sets `status` and `reason` for a run that exited with status $1 (its output in file $2).
classify_failed_run() {
    local rc=$1 log=$2
    if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
        status=CRASH reason="over the ${timeout_s}s limit"
    elif [ "$rc" -gt 128 ]; then
        status=CRASH reason="killed by signal $((rc - 128)) ($(kill -l $((rc - 128)) 2>/dev/null))"
    else
        status=FAIL reason="exit status $rc: $( { grep -m1 -iE 'libgomp|error|fault' "$log" || true; } | cut -c1-120)"
    fi
}

do_run() {
    local out= device=nvidia tsv= logs= positional=()
    timeout_s=1800
    while [ $# -gt 0 ]; do
        case "$1" in
            --timeout|--only|--device|--tsv|--logs) [ $# -ge 2 ] || die "$1 needs a value" ;;
        esac
        case "$1" in
            --timeout) timeout_s=$2; shift 2 ;;
            --only) only+=("$2"); shift 2 ;;
            --device) device=$2; shift 2 ;;
            --tsv) tsv=$2; shift 2 ;;
            --logs) logs=$2; shift 2 ;;
            -h|--help) usage ;;
            -*) die "unknown option $1 (see --help)" ;;
            *) positional+=("$1"); shift ;;
        esac
    done
    [ ${#positional[@]} -eq 1 ] || usage
    out=${positional[0]}
    case "$timeout_s" in ''|*[!0-9]*) die "--timeout must be a number of seconds" ;; esac
    case "$device" in nvidia|host) ;; *) die "--device must be nvidia or host" ;; esac
    [ -f "$out/build.tsv" ] && [ -x "$out/bin/acc-probe.x" ] || die "$out has no build.tsv and bin/acc-probe.x: give the OUT_DIR of \`build\`"
    out="$(cd "$out" && pwd)"
    [ -f "$out/polybench-lib.sh" ] || die "$out has no polybench-lib.sh: build it again with this script"
    # shellcheck source=../scripts/polybench-lib.sh
    . "$out/polybench-lib.sh"
    [ -n "$tsv" ] || tsv="$out/results.tsv"
    [ -n "$logs" ] || logs="$out/logs"
    mkdir -p "$logs" || die "cannot create $logs"
    for tool in timeout grep paste awk; do command -v $tool >/dev/null || die "$tool is needed"; done
    # (global: the EXIT trap reads it)
    scratch=$(mktemp -d -t npb-gcc.XXXXXX) || die "cannot create a scratch folder"
    trap 'rm -rf "$scratch"' EXIT

    export LD_LIBRARY_PATH="$out/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    export ACC_DEVICE_TYPE=$device
    ulimit -s unlimited 2>/dev/null || ulimit -s "$(ulimit -Hs)" 2>/dev/null
    [ -f "$out/build-info.txt" ] && sed 's/^/# /' "$out/build-info.txt"
    echo "# stack limit $(ulimit -s), ACC_DEVICE_TYPE=$ACC_DEVICE_TYPE, time limit ${timeout_s}s per run"

    # Which device libgomp uses: the probe, then libgomp's own debug lines for the same run.
    local used
    if ! timeout 120 "$out/bin/acc-probe.x" >"$logs/probe.log" 2>&1; then
        echo "npb-gcc: the probe failed (ACC_DEVICE_TYPE=$device):" >&2
        grep -v '^ *$' "$logs/probe.log" | sed 's/^/  /' >&2
        [ "$device" = nvidia ] && echo "npb-gcc: no GPU that libgomp can use; --device host runs on the host" >&2
        exit 1
    fi
    GOMP_DEBUG=1 timeout 120 "$out/bin/acc-probe.x" >"$logs/probe.debug.log" 2>&1
    used=$(grep -m1 '^name=' "$logs/probe.log" | cut -d= -f2-)
    [ -n "$used" ] || used=$(grep -m1 '^device_type=' "$logs/probe.log" | cut -d= -f2-)
    echo "# device: $used ($(grep -E '^(kernel_ran_on|driver|memory_mib)=' "$logs/probe.log" | tr '\n' ' ' | sed 's/ $//'))"
    grep -m1 'CUDA Driver' "$logs/probe.debug.log" | sed 's/^ */# libgomp: /'
    if [ "$device" = nvidia ] && ! grep -q '^kernel_ran_on=device' "$logs/probe.log"; then
        echo "npb-gcc: the probe's compute region did not run on the GPU" >&2
        exit 1
    fi

    local rows=() suite name class build bytes reason status seconds mops rc log
    local -A count=()
    field() { grep -m1 -E "^ *$1 *=" "$2" | sed -E 's/^[^=]*= *//; s/ *$//'; }
    while IFS='	' read -r suite name class build bytes reason; do
        [ "$suite" = npb ] || continue
        keep "$name" || continue
        lower=$(echo "$name" | tr 'A-Z' 'a-z')
        log="$logs/$lower.$class.log"
        seconds= mops=
        if [ "$build" != ok ]; then
            status=NOBUILD reason="build failed: $reason"
        else
            (cd "$scratch" && timeout "$timeout_s" "$out/bin/$lower.$class.x" >"$log" 2>&1) 2>/dev/null
            rc=$?
            seconds=$(field "Time in seconds" "$log")
            mops=$(field "Mop/s total" "$log")
            reason=
            if [ $rc = 0 ] && grep -qE '^ *Verification *= *SUCCESSFUL' "$log"; then
                status=PASS
            elif [ $rc = 0 ]; then
                status=FAIL reason="wrong answer: Verification = $(field Verification "$log")"
                [ "$reason" = "wrong answer: Verification = " ] && reason="no Verification line"
            else
                classify_failed_run "$rc" "$log"
            fi
        fi
        count[npb.$status]=$((${count[npb.$status]:-0} + 1))
        printf '%-4s %s %-5s %-8s %10s s %14s Mop/s  %s\n' "$name" "$class" "$build" "$status" "${seconds:--}" "${mops:--}" "$reason"
        rows+=("npb	$name	$class	$build	$status	${seconds:--}	${mops:--}	$used	$reason")
    done < "$out/build.tsv"
    local total=0 s line
    line=
    for s in PASS FAIL CRASH NOBUILD; do
        total=$((total + ${count[npb.$s]:-0}))
        line+=" $(echo "$s" | tr 'A-Z' 'a-z')=${count[npb.$s]:-0}"
    done
    [ $total -gt 0 ] && echo "npb summary:$line total=$total (device $used)"

    local dataset= acc_s ref_s diff work
    while IFS='	' read -r suite name class build bytes reason; do
        [ "$suite" = polybench ] || continue
        keep "$name" || continue
        dataset=$class acc_s= ref_s=
        work="$scratch/$name"
        mkdir -p "$work"
        if [ "$build" != ok ]; then
            status=NOBUILD reason="build failed: $reason"
        elif [ ! -x "$out/polybench/$name.ref.x" ]; then
            status=NOREF reason="the reference did not build"
        elif (cd "$work" && timeout "$timeout_s" "$out/polybench/$name.ref.x" >"$work/ref.out" 2>"$work/ref.dump") 2>/dev/null
            rc=$?; [ $rc != 0 ]; then
            if [ $rc = 124 ]; then
                status=NOREF reason="the sequential reference ran past ${timeout_s} s"
            elif [ $rc -gt 128 ]; then
                status=NOREF reason="the sequential reference died of signal $((rc - 128)) (a fault in the program itself)"
            else
                status=NOREF reason="the sequential reference exited with status $rc"
            fi
        else
            ref_s=$(head -c 40 "$work/ref.out" | head -1)
            (cd "$work" && timeout "$timeout_s" "$out/polybench/$name.x" >"$work/acc.out" 2>"$work/acc.dump") 2>/dev/null
            rc=$?
            acc_s=$(head -c 40 "$work/acc.out" | head -1)
            reason=
            if [ $rc = 0 ]; then
                diff=$(compare_dumps "$work/ref.dump" "$work/acc.dump")
                if [ -z "$diff" ]; then status=PASS; else status=FAIL reason="dump differs: $diff"; fi
            else
                grep -v -E '^[-+0-9. na]*$' "$work/acc.dump" | head -20 >"$logs/$name.err"
                classify_failed_run "$rc" "$logs/$name.err"
            fi
        fi
        rm -rf "$work"
        count[pb.$status]=$((${count[pb.$status]:-0} + 1))
        printf '%-20s %-8s %10s s %10s s (ref)  %s\n' "$name" "$status" "${acc_s:--}" "${ref_s:--}" "$reason"
        rows+=("polybench	$name	$class	$build	$status	${acc_s:--}	${ref_s:--}	$used	$reason")
    done < "$out/build.tsv"
    total=0 line=
    for s in PASS FAIL CRASH NOREF NOBUILD; do
        total=$((total + ${count[pb.$s]:-0}))
        line+=" $(echo "$s" | tr 'A-Z' 'a-z')=${count[pb.$s]:-0}"
    done
    [ $total -gt 0 ] && echo "polybench summary:$line total=$total (device $used, dataset $dataset)"

    {
        printf 'suite\tname\tclass\tbuild\tstatus\tseconds\tmops_or_ref_seconds\tdevice\treason\n'
        [ ${#rows[@]} -gt 0 ] && printf '%s\n' "${rows[@]}"
    } >"$tsv"
    return 0
}

only=()
[ $# -ge 1 ] || usage
case "$1" in
    build) shift; do_build "$@" ;;
    run) shift; do_run "$@" ;;
    -h|--help) sed -n '/^# Usage:/,/^# `build` writes/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) usage ;;
esac
exit 0
