#!/usr/bin/env bash
# Runs every program of tests/programs (and the staging counter tests' programs,
# tests/staging_programs, and examples/ at their test sizes) with `yosegi run --device cuda`
# and compares its output
# with the gcc reference build (pragmas ignored), the way tests/differential.rs does for the
# simulator: both must exit 0; output tokens (split on whitespace) must match, integers and
# words exactly, other numbers within the program's `// yosegi-test: rtol=` (default 1e-9,
# 0 = identical text; values within 1e-12 of each other always agree).
#
# Usage: scripts/gpu-test.sh [path/to/yosegi]     (default: target/release/yosegi)
# The MESI-CUDA dialect's examples (examples/mesi/*.cu) are compared with their plain C twins.
# Every program runs five times against one gcc reference: with the default `--staging auto`
# (the runtime's choice among kernel variants), with `--staging on` (shared-memory staged
# variants always launched, so every staged kernel is checked on the GPU), with `--fusion on`
# (every legal chain of a region's kernels fused and the fused kernel always run; `off` passes
# `--fusion off`), and split over 2 and 4 devices (`--gpus N`: on a machine with fewer GPUs,
# logical devices on them, each with its own memory; every kernel that can be split is,
# YOSEGI_MIN_SPLIT_BYTES=0, and every part that can runs its interior beside its halo exchange,
# YOSEGI_OVERLAP_MIN_ITERATIONS=0). Mode `ranksN` runs the program as N MPI ranks of one device
# each (`--ranks N`: ranks share the machine's GPUs round robin; skipped, said so, without
# `mpirun`).
# Environment: YOSEGI_DEVICE=sim runs the same comparison on the simulator (to check the
# script itself on a machine without a GPU); ONLY=name runs one program (ONLY=cache only the
# kernel-cache checks, ONLY=aot only those of kernels compiled ahead of time and on worker
# threads, ONLY=model only the performance model's, ONLY=tools only the checks of
# profilers, sanitizers and progress, which otherwise run after the programs); STAGING="auto on off gpus3"
# chooses the modes (`gpusN`: `--staging auto --gpus N`; `fusion`: `--fusion on`; default
# "auto on fusion gpus2 gpus4").
# Prints one PASS/FAIL line per program and mode, then `mode MODE: N passed, M failed` per
# mode and the total `N passed, M failed`; exits 1 on any failure.
# (The unit tests `cargo test --lib runtime::cuda` also compare the GPU with the simulator
# kernel by kernel when a GPU is present.)
set -u

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
yosegi="${1:-$root/target/release/yosegi}"
device="${YOSEGI_DEVICE:-cuda}"
programs="$root/tests/programs"
read -r -a modes <<<"${STAGING:-auto on fusion gpus2 gpus4}"
for mode in "${modes[@]}"; do
    case "$mode" in
        auto|on|off|fusion|gpus[1-9]|gpus[1-9][0-9]|ranks[2-9]) ;;
        *) echo "gpu-test: STAGING mode \`$mode\` is not one of auto, on, off, fusion, gpusN, ranksN" >&2; exit 2 ;;
    esac
done
# The `yosegi run` flags of a mode.
mode_flags() {
    case "$1" in
        gpus*) echo "--staging auto --gpus ${1#gpus}" ;;
        ranks*) echo "--staging auto --ranks ${1#ranks}" ;;
        fusion) echo "--staging auto --fusion on --gpus 1" ;;
        off) echo "--staging off --fusion off --gpus 1" ;;
        *) echo "--staging $1 --gpus 1" ;;
    esac
}
[ "${#modes[@]}" -gt 0 ] || { echo "gpu-test: STAGING names no mode" >&2; exit 2; }

if [ ! -x "$yosegi" ]; then
    echo "gpu-test: no yosegi binary at $yosegi (build it with: cargo build --release)" >&2
    exit 2
fi
for tool in gcc python3; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "gpu-test: $tool is needed and is not on PATH" >&2
        exit 2
    fi
done
# NVRTC and its builtins library are found through the loader's path.
for dir in "${CUDA_HOME:-/usr/local/cuda}/lib64" /usr/local/cuda/lib64; do
    if [ -d "$dir" ]; then
        export LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
        break
    fi
done

scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT

# The comparison of tests/differential.rs (compare_outputs / tokens_agree).
cat >"$scratch/compare.py" <<'PY'
import math, re, sys

def is_integer(t):
    return re.fullmatch(r"[-+]?[0-9]+", t) is not None

def agree(want, got, rtol):
    if want == got:
        return True
    if rtol == 0.0 or is_integer(want) or is_integer(got):
        return False
    try:
        w, g = float(want), float(got)
    except ValueError:
        return False
    if not (math.isfinite(w) and math.isfinite(g)):
        return False
    return abs(w - g) <= max(rtol * max(abs(w), abs(g)), 1e-12)

ignored = sys.argv[4].split() if len(sys.argv) > 4 else []
def tokens(path):
    lines = open(path, errors="replace").read().splitlines()
    return " ".join(l for l in lines if not any(l.lstrip().startswith(w) for w in ignored)).split()
expected = tokens(sys.argv[1])
actual = tokens(sys.argv[2])
rtol = float(sys.argv[3])
for i, (w, g) in enumerate(zip(expected, actual)):
    if not agree(w, g, rtol):
        print(f"token {i}: expected `{w}`, got `{g}`")
        sys.exit(1)
if len(expected) != len(actual):
    print(f"expected {len(expected)} tokens, got {len(actual)}")
    sys.exit(1)
PY

passed=0
failed=0
declare -A mode_passed=()
declare -A mode_failed=()
# Without a reference no mode of the program can pass: each counts as failed.
fail_every_mode() {
    for mode in "${modes[@]}"; do
        failed=$((failed + 1))
        mode_failed[$mode]=$((${mode_failed[$mode]:-0} + 1))
    done
}
for entry in "$programs"/* "$root/tests/staging_programs"/*.c "$root/examples"/*.c "$root/examples/mesi"/*.cu "$root/tests/dialect_programs"/*.cu; do
    name="$(basename "$entry")"
    if [ -d "$entry" ]; then
        base="$entry"
        if [ -f "$entry/FILES" ]; then
            sources=()
            while IFS= read -r line; do
                line="$(echo "$line" | tr -d '[:space:]')"
                [ -n "$line" ] && sources+=("$entry/$line")
            done <"$entry/FILES"
        else
            sources=("$entry"/*.c)
        fi
    elif [[ "$entry" == *.c || "$entry" == *.cu ]]; then
        base="$(dirname "$entry")"
        sources=("$entry")
    else
        continue
    fi
    if [ -n "${ONLY:-}" ] && [ "$name" != "$ONLY" ] && [ "$name" != "$ONLY.c" ]; then
        continue
    fi

    args=()
    cflags=()
    ignored=""
    stdin_file=/dev/null
    rtol=1e-9
    while IFS= read -r setting; do
        key="${setting%%=*}"
        value="${setting#*=}"
        key="$(echo "$key" | tr -d '[:space:]')"
        case "$key" in
            args) read -r -a args <<<"$value" ;;
            stdin) stdin_file="$base/$(echo "$value" | tr -d '[:space:]')" ;;
            rtol) rtol="$(echo "$value" | tr -d '[:space:]')" ;;
            cflags) read -r -a cflags <<<"$value" ;;
            ignore-lines) ignored="$value" ;;
            *) echo "gpu-test: $name: unknown yosegi-test key \`$key\`" >&2 ;;
        esac
    done < <(cat "${sources[@]}" | sed -n 's#^[[:space:]]*// yosegi-test:[[:space:]]*##p')

    work="$scratch/$name"
    mkdir -p "$work"
    # A program in the MESI-CUDA dialect is checked against its plain C twin.
    reference_sources=()
    for s in "${sources[@]}"; do reference_sources+=("${s%.cu}$([[ "$s" == *.cu ]] && echo .c)"); done
    if ! gcc -std=gnu11 -O1 -w -I"$root/include" "${cflags[@]}" "${reference_sources[@]}" -o "$work/reference" -lm 2>"$work/gcc.err"; then
        echo "FAIL $name: gcc could not build the reference: $(head -c 300 "$work/gcc.err")"
        fail_every_mode
        continue
    fi
    "$work/reference" "${args[@]}" <"$stdin_file" >"$work/expected" 2>"$work/expected.err"
    ref_status=$?
    if [ "$ref_status" -ne 0 ]; then
        echo "FAIL $name: the gcc reference exited with $ref_status"
        fail_every_mode
        continue
    fi
    for mode in "${modes[@]}"; do
        label="$name [$mode]"
        if [[ "$mode" == ranks* ]] && ! command -v mpirun >/dev/null 2>&1; then
            echo "SKIP $label: no MPI launcher (mpirun) on this machine"
            continue
        fi
        started=$(date +%s.%N)
        read -r -a flags <<<"$(mode_flags "$mode")"
        # Split every launch that can be, however small (the default keeps small ones whole).
        YOSEGI_MIN_SPLIT_BYTES=0 YOSEGI_OVERLAP_MIN_ITERATIONS=0 "$yosegi" run --device "$device" "${flags[@]}" "${cflags[@]}" "${sources[@]}" -- "${args[@]}" <"$stdin_file" \
            >"$work/actual.$mode" 2>"$work/actual.$mode.err"
        status=$?
        seconds=$(python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.2f}')" "$started" "$(date +%s.%N)")
        if [ "$status" -ne 0 ]; then
            echo "FAIL $label: yosegi --device $device ${flags[*]} exited with $status (${seconds}s)"
            sed 's/^/    /' "$work/actual.$mode.err" | head -20
            failed=$((failed + 1))
            mode_failed[$mode]=$((${mode_failed[$mode]:-0} + 1))
            continue
        fi
        if mismatch="$(python3 "$scratch/compare.py" "$work/expected" "$work/actual.$mode" "$rtol" "$ignored")"; then
            echo "PASS $label (${seconds}s)"
            passed=$((passed + 1))
            mode_passed[$mode]=$((${mode_passed[$mode]:-0} + 1))
        else
            echo "FAIL $label: output differs from gcc's (rtol $rtol): $mismatch"
            sed 's/^/    /' "$work/actual.$mode.err" | head -10
            failed=$((failed + 1))
            mode_failed[$mode]=$((${mode_failed[$mode]:-0} + 1))
        fi
    done
done

# The kernel cache on the GPU (docs/SECURITY.md): a private cache directory gets the compiled
# images and the kernels' CUDA sources, private (0600 files, 0700 directories); a cache directory
# its group can write is not used: one warning, the run still correct, nothing written into it.
cache_check() {
    local label="$1"
    shift
    if "$@"; then
        echo "PASS $label"
        passed=$((passed + 1))
    else
        echo "FAIL $label"
        failed=$((failed + 1))
    fi
}
if [ -z "${ONLY:-}" ] || [ "${ONLY}" = cache ]; then
    jacobi="$root/examples/jacobi2d.c"
    gcc -std=gnu11 -O1 -w -I"$root/include" "$jacobi" -o "$scratch/jacobi_ref" -lm
    "$scratch/jacobi_ref" 64 20 | grep -v total >"$scratch/jacobi.expected"
    private_cache() {
        local dir="$scratch/cache-private"
        YOSEGI_CACHE_DIR="$dir" "$yosegi" run --device "$device" "$jacobi" -- 64 20 >"$scratch/jp.out" 2>"$scratch/jp.err" || return 1
        grep -v total "$scratch/jp.out" | diff -q - "$scratch/jacobi.expected" >/dev/null || { echo "    output differs"; return 1; }
        if [ "$device" = cuda ]; then
            ls "$dir"/*.kernel >/dev/null 2>&1 || { echo "    no kernel images cached"; return 1; }
            ls "$dir"/sources/*.cu >/dev/null 2>&1 || { echo "    no kernel sources kept"; return 1; }
            local loose
            loose="$(find "$dir" \( -type f ! -perm 600 \) -o \( -type d ! -perm 700 \) | head -3)"
            [ -z "$loose" ] || { echo "    not private: $loose"; return 1; }
        fi
    }
    shared_cache() {
        local dir="$scratch/cache-shared"
        mkdir -p "$dir" && chmod 775 "$dir"
        YOSEGI_CACHE_DIR="$dir" "$yosegi" run --device "$device" "$jacobi" -- 64 20 >"$scratch/js.out" 2>"$scratch/js.err" || return 1
        grep -v total "$scratch/js.out" | diff -q - "$scratch/jacobi.expected" >/dev/null || { echo "    output differs"; return 1; }
        grep -q "is not used" "$scratch/js.err" || { echo "    no warning"; return 1; }
        [ -z "$(ls -A "$dir")" ] || { echo "    written into: $(ls -A "$dir" | head -3)"; return 1; }
    }
    cache_check "kernel cache: a private directory is used, privately" private_cache
    cache_check "kernel cache: a group-writable directory is not used" shared_cache
fi

# Kernels made ahead of time (docs/guide/kernel-cache.md, "The first run"): a program of many kernels linked by
# `yosegi cc` carries images for this GPU and runs them with no NVRTC at all (`--stats=json`
# counts no compilation; YOSEGI_NVRTC=off at run time changes nothing), the same program
# through `yosegi run` with an empty cache gets its kernels from the worker threads, and a
# link without NVRTC (YOSEGI_NVRTC=off) warns once and gives an executable that still runs.
if { [ -z "${ONLY:-}" ] || [ "${ONLY}" = aot ]; } && [ "$device" != cuda ]; then
    echo "SKIP kernels made ahead of time and on worker threads (needs --device cuda)"
elif [ -z "${ONLY:-}" ] || [ "${ONLY}" = aot ]; then
    many="$scratch/many_kernels.c"
    {
        echo '#include <stdio.h>'
        echo 'int main(void) {'
        echo '    static double a[4096];'
        echo '    for (int i = 0; i < 4096; i++) a[i] = i;'
        echo '    #pragma acc data copy(a)'
        echo '    {'
        for k in $(seq 1 40); do
            echo "        #pragma acc parallel loop"
            echo "        for (int i = 0; i < 4096; i++) a[i] = a[i] * 0.5 + $k.0 * (i % $((k + 1)));"
        done
        echo '    }'
        echo '    double s = 0; for (int i = 0; i < 4096; i++) s += a[i];'
        echo '    printf("%.10e\n", s);'
        echo '    return 0;'
        echo '}'
    } >"$many"
    gcc -std=gnu11 -O1 -w "$many" -o "$scratch/many_ref"
    "$scratch/many_ref" >"$scratch/many.expected"
    # `counters` of --stats=json on stderr: FIELD>=N or FIELD==N for each argument.
    stats_hold() {
        python3 - "$@" <<'CHECK'
import json, sys
text = open(sys.argv[1]).read()
stats = json.loads(text[text.index("{\n"):])
c = stats["counters"]
bad = []
for cond in sys.argv[2:]:
    op = ">=" if ">=" in cond else "=="
    name, value = cond.split(op)
    ok = c[name] >= int(value) if op == ">=" else c[name] == int(value)
    if not ok:
        bad.append(f"{name} = {c[name]}, expected {op} {value}")
if bad:
    print("    " + "; ".join(bad))
    sys.exit(1)
CHECK
    }
    cc_bin="$(dirname "$yosegi")/yosegi-cc"
    [ -x "$cc_bin" ] || cc_bin="$yosegi cc"
    embedded_images_run_without_nvrtc() {
        $cc_bin -O2 "$many" -o "$scratch/many_aot" 2>"$scratch/many_aot.link" || { cat "$scratch/many_aot.link"; return 1; }
        [ ! -s "$scratch/many_aot.link" ] || { echo "    the link warned:"; head -3 "$scratch/many_aot.link" | sed 's/^/    /'; return 1; }
        for nvrtc in on off; do
            YOSEGI_NVRTC="$nvrtc" YOSEGI_CACHE_DIR="$scratch/cache-aot-$nvrtc" YOSEGI_DEVICE=cuda YOSEGI_STATS=json "$scratch/many_aot" >"$scratch/many_aot.out" 2>"$scratch/many_aot.err" || { tail -3 "$scratch/many_aot.err"; return 1; }
            diff -q "$scratch/many_aot.out" "$scratch/many.expected" >/dev/null || { echo "    output differs (NVRTC $nvrtc)"; return 1; }
            stats_hold "$scratch/many_aot.err" kernels_embedded">="40 kernels_compiled_waited==0 kernels_compiled_on_workers==0 kernels_from_disk==0 || return 1
        done
        # The same executable on the simulator, unchanged.
        YOSEGI_DEVICE=sim "$scratch/many_aot" >"$scratch/many_sim.out" 2>"$scratch/many_sim.err" || { tail -3 "$scratch/many_sim.err"; return 1; }
        diff -q "$scratch/many_sim.out" "$scratch/many.expected" >/dev/null || { echo "    output differs on sim"; return 1; }
    }
    cache_check "an executable of 40 kernels runs its embedded images with no NVRTC" embedded_images_run_without_nvrtc
    workers_compile_for_run() {
        YOSEGI_CACHE_DIR="$scratch/cache-workers" "$yosegi" run --device cuda --stats=json "$many" >"$scratch/many_run.out" 2>"$scratch/many_run.err" || { tail -3 "$scratch/many_run.err"; return 1; }
        diff -q "$scratch/many_run.out" "$scratch/many.expected" >/dev/null || { echo "    output differs"; return 1; }
        # Every kernel's code came from the workers, either before its launch or waited for.
        python3 - "$scratch/many_run.err" <<'CHECK' || return 1
import json, sys
text = open(sys.argv[1]).read()
c = json.loads(text[text.index("{\n"):])["counters"]
made = c["kernels_compiled_on_workers"] + c["kernels_compiled_waited"]
if made < 40 or c["worker_jit_s"] <= 0 and c["kernels_compiled_on_workers"] > 0:
    print(f"    {made} kernels compiled, worker time {c['worker_jit_s']}")
    sys.exit(1)
CHECK
    }
    cache_check "yosegi run compiles a program's 40 kernels on worker threads" workers_compile_for_run
    link_without_nvrtc_still_runs() {
        YOSEGI_NVRTC=off $cc_bin -O2 "$many" -o "$scratch/many_jit" 2>"$scratch/many_jit.link" || { cat "$scratch/many_jit.link"; return 1; }
        [ "$(grep -c "not compiled ahead of time" "$scratch/many_jit.link")" = 1 ] || { echo "    no single warning:"; head -3 "$scratch/many_jit.link"; return 1; }
        YOSEGI_CACHE_DIR="$scratch/cache-jit" YOSEGI_DEVICE=cuda "$scratch/many_jit" >"$scratch/many_jit.out" 2>"$scratch/many_jit.err" || { tail -3 "$scratch/many_jit.err"; return 1; }
        diff -q "$scratch/many_jit.out" "$scratch/many.expected" >/dev/null || { echo "    output differs"; return 1; }
    }
    cache_check "a link without NVRTC warns once and its executable compiles at run time" link_without_nvrtc_still_runs
fi

# The performance model (docs/guide/performance-model.md): a `--stats` run on the GPU measures the
# machine once (its figures in range: a launch of 1-50 us, a first launch that loads a module
# of 5-500 us), leaves its predictions, and `explain` shows them for the GPU it ran on.
if [ -z "${ONLY:-}" ] || [ "${ONLY}" = model ]; then
    model_reaches_explain() {
        local dir="$scratch/cache-model"
        YOSEGI_CACHE_DIR="$dir" "$yosegi" run --device "$device" --stats "$root/examples/jacobi2d.c" -- 256 20 >"$scratch/model.out" 2>"$scratch/model.err" || return 1
        grep -q "model (per launch)" "$scratch/model.err" || { echo "    no predictions in --stats"; return 1; }
        if [ "$device" = cuda ]; then
            local machine
            machine="$(ls "$dir"/machine-*.json 2>/dev/null | head -1)"
            [ -n "$machine" ] || { echo "    no machine figures kept"; return 1; }
            python3 - "$machine" <<'CHECK' || return 1
import json, sys
m = json.load(open(sys.argv[1]))
bad = [f"{k} = {m[k]:.3g} s, expected {lo:g}-{hi:g}" for k, lo, hi in (("launch_s", 1e-6, 50e-6), ("first_launch_s", 5e-6, 500e-6), ("upload_touch_s", 0.0, 500e-6)) if not lo <= m[k] <= hi]
if not m.get("measured") or bad:
    print("    machine figures out of range: " + ("; ".join(bad) or "not measured"))
    sys.exit(1)
CHECK
        fi
        YOSEGI_CACHE_DIR="$dir" "$yosegi" explain "$root/examples/jacobi2d.c" >"$scratch/model-explain.out" 2>&1 || return 1
        grep -q "^    model on .* for n=256" "$scratch/model-explain.out" || { echo "    explain shows no prediction:"; grep -m3 "model" "$scratch/model-explain.out" | sed 's/^/    /'; return 1; }
        grep -q "^  model on .*: one pass over the region's kernels predicted" "$scratch/model-explain.out" || { echo "    explain shows no region pass"; return 1; }
    }
    cache_check "the model measures the machine, and explain shows the run's predictions" model_reaches_explain
fi

# Line information (docs/guide/profiling.md): a kernel writing out of its array,
# run under compute-sanitizer, is reported at the user's file and line; Nsight Compute sees the
# NVTX ranges; NVRTC's compilations show progress on a terminal and nothing on a pipe. Each
# needs the GPU and its tool; said SKIP otherwise.
if [ -z "${ONLY:-}" ] || [ "${ONLY}" = tools ]; then
    if [ "$device" = cuda ] && command -v compute-sanitizer >/dev/null 2>&1; then
        oob="$scratch/oob.c"
        cat >"$oob" <<'PROGRAM'
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
    int n = 1024;
    long shift = argc > 1 ? atol(argv[1]) : 0;
    double *a = malloc(n * sizeof(double));
    for (int i = 0; i < n; i++) a[i] = 0.0;
#pragma acc parallel loop copy(a[0:n])
    for (int i = 0; i < n; i++)
        a[i + shift] = i;
    printf("%f\n", a[1]);
    return 0;
}
PROGRAM
        sanitizer_names_the_line() {
            YOSEGI_CACHE_DIR="$scratch/cache-sanitizer" compute-sanitizer --print-limit 1 "$yosegi" run --device cuda "$oob" -- 4096 >"$scratch/oob.out" 2>&1
            grep -q "Invalid __global__ write" "$scratch/oob.out" || { echo "    no invalid write reported:"; head -5 "$scratch/oob.out" | sed 's/^/    /'; return 1; }
            grep -q "oob.c:10" "$scratch/oob.out" || { echo "    the report does not name oob.c:10:"; grep -m3 "at \|in " "$scratch/oob.out" | sed 's/^/    /'; return 1; }
        }
        cache_check "compute-sanitizer names the user's file and line" sanitizer_names_the_line
    else
        echo "SKIP compute-sanitizer names the user's file and line (needs --device cuda and compute-sanitizer)"
    fi
    # NVTX ranges (runtime::nvtx), seen by Nsight Compute: the kernel runs inside the ranges of
    # its data region and its compute region, named after the file and line.
    ranged="$scratch/ranged.c"
    cat >"$ranged" <<'PROGRAM'
#include <stdio.h>
int main(void) {
    double a[1000];
    for (int i = 0; i < 1000; i++) a[i] = i;
#pragma acc data copy(a)
    {
#pragma acc parallel loop
        for (int i = 0; i < 1000; i++) a[i] = 2.0 * a[i];
    }
    printf("%f\n", a[999]);
    return 0;
}
PROGRAM
    if [ "$device" = cuda ] && command -v ncu >/dev/null 2>&1; then
        ncu_sees_the_ranges() {
            YOSEGI_CACHE_DIR="$scratch/cache-nvtx" ncu --nvtx --launch-count 1 --section LaunchStats "$yosegi" run --device cuda "$ranged" >"$scratch/ranged.out" 2>&1
            grep -q "1998.000000" "$scratch/ranged.out" || { echo "    wrong output:"; tail -5 "$scratch/ranged.out" | sed 's/^/    /'; return 1; }
            grep -q "ranged.c:5 data" "$scratch/ranged.out" || { echo "    no data region range:"; grep -i -m5 "nvtx\|ranged.c" "$scratch/ranged.out" | sed 's/^/    /'; return 1; }
            grep -q "ranged.c:7 main_l8" "$scratch/ranged.out" || { echo "    no compute region range:"; grep -i -m5 "nvtx\|ranged.c" "$scratch/ranged.out" | sed 's/^/    /'; return 1; }
        }
        cache_check "Nsight Compute sees the NVTX ranges of the data and compute regions" ncu_sees_the_ranges
    else
        echo "SKIP Nsight Compute sees the NVTX ranges (needs --device cuda and ncu)"
    fi
    if [ "$device" = cuda ] && command -v script >/dev/null 2>&1; then
        compiling_shows_on_a_terminal_only() {
            # A fresh cache, so that NVRTC compiles; `script` gives the run a terminal.
            YOSEGI_CACHE_DIR="$scratch/cache-progress-tty" script -qec "'$yosegi' run --device cuda '$ranged'" /dev/null >"$scratch/progress-tty.out" 2>&1
            grep -q "yosegi: compiling main_l8 for sm_" "$scratch/progress-tty.out" || { echo "    no progress line on a terminal:"; tail -3 "$scratch/progress-tty.out" | cat -v | sed 's/^/    /'; return 1; }
            YOSEGI_CACHE_DIR="$scratch/cache-progress-pipe" "$yosegi" run --device cuda "$ranged" >"$scratch/progress-pipe.out" 2>"$scratch/progress-pipe.err"
            [ ! -s "$scratch/progress-pipe.err" ] || { echo "    stderr on a pipe:"; cat -v "$scratch/progress-pipe.err" | head -3 | sed 's/^/    /'; return 1; }
        }
        cache_check "kernel compilation shows progress on a terminal and nothing on a pipe" compiling_shows_on_a_terminal_only
    else
        echo "SKIP kernel compilation shows progress on a terminal (needs --device cuda and script)"
    fi
fi

for mode in "${modes[@]}"; do
    echo "mode $mode: ${mode_passed[$mode]:-0} passed, ${mode_failed[$mode]:-0} failed"
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
