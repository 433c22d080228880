#!/usr/bin/env bash
# The performance model against the device: runs the example programs at benchmark sizes, the
# loop-fusion benchmarks and, when given, PolyBench-ACC and the NAS benchmarks, each with
# YOSEGI_STATS_DIR set so that every process leaves its stats as JSON (per kernel: launches,
# measured device time and the model's prediction); then bench/model_table.py prints the
# accuracy table (median and 90th percentile of |predicted - measured| / measured over the
# kernels) and draws predicted against measured as an SVG.
#
#   bench/model.sh [--device cuda|sim] [--polybench DIR] [--dataset NAME] [--npb DIR]
#                  [--class C] [--warm] [--quick] BINARY
#
#   --polybench DIR   PolyBench-ACC clone (scripts/polybench.sh runs it; default dataset STANDARD)
#   --npb DIR         openacc-npb clone (scripts/npb.sh runs it; default class A); SP, BT and LU
#                     then run once more with `--staging off`, into OUT/model-steady, so that the
#                     plain variants' steady launches are known (the table's variant choice
#                     against steady launches)
#   --budget SECS     stop PolyBench after SECS seconds (the programs run so far count)
#   --warm            with --npb: first run every NAS benchmark, then SP, BT and LU with
#                     `--staging off`, with stats to a scratch folder, so that the launch costs
#                     the runtime learns from programs (docs/guide/performance-model.md) are known
#                     before the measured pass, as on a machine that has run programs before
#                     (SP, BT, CG and MG alone, or all seven, leave too few small queued
#                     kernels to learn from: bench/NOTES.md run 38). Both passes use a kernel
#                     cache of their own (OUT/model-cache: the machine is calibrated afresh),
#                     emptied between them but for the machine's figures, so that the
#                     measured pass compiles and explores as a fresh run does
#   --quick           small sizes (checks the script itself, meant for --device sim)
#
# Results go to $OUT/model (the GPU runner) or bench/out/model: one folder of JSON per suite,
# table.md and model.svg; with --npb, the steady pass's JSON beside it in model-steady.
set -u -o pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
device=cuda
polybench=""
dataset=STANDARD
npb=""
class=A
quick=""
warm=""
budget=0
binary=""
while [ $# -gt 0 ]; do
    case "$1" in
        --device) device=$2; shift 2 ;;
        --polybench) polybench=$2; shift 2 ;;
        --dataset) dataset=$2; shift 2 ;;
        --npb) npb=$2; shift 2 ;;
        --class) class=$2; shift 2 ;;
        --quick) quick=1; shift ;;
        --warm) warm=1; shift ;;
        --budget) budget=$2; shift 2 ;;
        -h|--help) sed -n '2,/^set -u/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
        -*) echo "model.sh: unknown option $1" >&2; exit 2 ;;
        *) binary=$1; shift ;;
    esac
done
[ -n "$binary" ] && [ -x "$binary" ] || { echo "model.sh: give the yosegi binary" >&2; exit 2; }
binary="$(cd "$(dirname "$binary")" && pwd)/$(basename "$binary")"
out="${OUT:-$root/bench/out}/model"
rm -rf "$out" "$out-steady" && mkdir -p "$out/examples" "$out/fusion"
# Every candidate variant runs, even where the model's choice is clear enough for the runtime
# to take it untimed: the variant table compares the model's choice with measurement.
export YOSEGI_MODEL_DECIDES=off
# Nor does the exploration budget stop the timing, and every launch is predicted however long
# its sample takes: the accuracy table covers the kernels the runs before these bounds did.
export YOSEGI_EXPLORE_BUDGET_MS=off YOSEGI_MODEL_SAMPLE_MS=off YOSEGI_MODEL_BUDGET_MS=off

if [ -n "$warm" ] && [ -n "$npb" ]; then
    # A kernel cache of the benchmark's own (it calibrates afresh), not the user's.
    export YOSEGI_CACHE_DIR="$out-cache"
    rm -rf "$YOSEGI_CACHE_DIR" && mkdir -p "$YOSEGI_CACHE_DIR" && chmod 700 "$YOSEGI_CACHE_DIR"
    scratch=$(mktemp -d)
    YOSEGI_STATS_DIR="$scratch" "$root/scripts/npb.sh" --device "$device" --class "$class" \
        --timeout 300 "$npb" "$binary" >"$out/warm.log" 2>&1
    YOSEGI_STATS_DIR="$scratch" "$root/scripts/npb.sh" --device "$device" --class "$class" --staging off \
        --only SP --only BT --only LU --timeout 300 "$npb" "$binary" >>"$out/warm.log" 2>&1
    echo "warm pass: $(grep '^summary' "$out/warm.log" | tr '\n' ' ')"
    # Whether the measured pass will use launch costs learnt from programs or the calibration's.
    python3 - "$YOSEGI_CACHE_DIR" <<'PY'
import glob, json, sys
files = glob.glob(sys.argv[1] + "/machine-*.json")
if not files:
    print("warm pass: no machine figures kept (a simulated device has none)")
for f in files:
    m = json.load(open(f))
    learnt = m.get("launch_observed_s"), m.get("idle_launch_observed_s")
    said = "learnt launch %s us, idle extra %s us" % tuple("%.2f" % (v * 1e6) if v else "-" for v in learnt)
    print("warm pass: " + (said if learnt[0] else "no launch cost learnt: the measured pass uses the calibration's"))
PY
    rm -rf "$scratch"
    # Everything but the machine's figures and observations: compiled kernels, variant choices.
    find "$YOSEGI_CACHE_DIR" -mindepth 1 -maxdepth 1 ! -name 'machine-*' -exec rm -rf {} +
fi

# name|source|defines|args (sizes a little below the benchmark table's, steps enough to time)
if [ -n "$quick" ]; then
    cases=(
        "himeno|examples/himeno.c|-DSIZE_TINY -DNN=2|"
        "jacobi2d|examples/jacobi2d.c||64 5"
        "diffusion1d|examples/diffusion1d.c||1024 5"
        "heat3d|examples/heat3d.c||16 3"
        "cg|examples/cg.c||16 5 0"
        "matmul_vec|examples/matmul_vec.c||256 64 2"
        "row_scan|examples/row_scan.c|-DROWS=1000|2"
    )
else
    cases=(
        "himeno-M|examples/himeno.c|-DSIZE_M -DNN=50|"
        "himeno-L|examples/himeno.c|-DSIZE_L -DNN=20|"
        "jacobi2d-4096|examples/jacobi2d.c||4096 100"
        "jacobi2d-1024|examples/jacobi2d.c||1024 200"
        "diffusion1d-65536|examples/diffusion1d.c||65536 200"
        "diffusion1d-64M|examples/diffusion1d.c||67108864 50"
        "diffusion_wide-4M|examples/diffusion_wide.c||4194304 100"
        "wide_stencil_f32-16M|examples/wide_stencil_f32.c||16777216 50"
        "heat3d-256|examples/heat3d.c||256 50"
        "heat3d-128|examples/heat3d.c||128 100"
        "cg-1024|examples/cg.c||1024 50 0"
        "matmul_vec-8192|examples/matmul_vec.c||8192 1024 50"
        "matmul_vec-65536|examples/matmul_vec.c||65536 1024 20"
        "row_scan|examples/row_scan.c|-DROWS=100000|50"
    )
fi
for c in "${cases[@]}"; do
    IFS='|' read -r name source defines args <<<"$c"
    mkdir -p "$out/examples/$name"
    # shellcheck disable=SC2086
    if YOSEGI_STATS_DIR="$out/examples/$name" timeout 300 "$binary" run --device "$device" -w $defines "$root/$source" -- $args \
        >"$out/examples/$name.log" 2>&1; then
        echo "examples: $name ok"
    else
        echo "examples: $name FAILED (see $name.log)"
    fi
done
for name in ll18 y_solve filter; do
    args=""
    [ -n "$quick" ] && case $name in ll18) args="64 64 2" ;; y_solve) args="64 2" ;; filter) args="32 2" ;; esac
    mkdir -p "$out/fusion/$name"
    # shellcheck disable=SC2086
    if YOSEGI_STATS_DIR="$out/fusion/$name" timeout 300 "$binary" run --device "$device" -w "$root/bench/fusion/$name.c" -- $args \
        >"$out/fusion/$name.log" 2>&1; then
        echo "fusion: $name ok"
    else
        echo "fusion: $name FAILED"
    fi
done
if [ -n "$npb" ]; then
    mkdir -p "$out/npb"
    YOSEGI_STATS_DIR="$out/npb" "$root/scripts/npb.sh" --device "$device" --class "$class" \
        --tsv "$out/npb.tsv" "$npb" "$binary" >"$out/npb.log" 2>&1
    tail -1 "$out/npb.log"
fi
if [ -n "$polybench" ]; then
    mkdir -p "$out/polybench"
    # The budget stops the script from starting programs (a `timeout` around it would leave
    # the program it was running on the GPU, beside the next runs).
    YOSEGI_STATS_DIR="$out/polybench" "$root/scripts/polybench.sh" --device "$device" --dataset "$dataset" --timeout 120 \
        --budget "$budget" --tsv "$out/polybench.tsv" "$polybench" "$binary" >"$out/polybench.log" 2>&1
    echo "polybench: $(grep -c 'PASS\|FAIL' "$out/polybench.log") programs"
fi
steady=()
if [ -n "$npb" ]; then
    # The exploration's early launches are no measure of some plain variants (bench/NOTES.md
    # run 36: NPB LU's `rhs` kernels timed at 20-31 us, steady at 11-14): their steady launches.
    mkdir -p "$out-steady"
    YOSEGI_STATS_DIR="$out-steady" "$root/scripts/npb.sh" --device "$device" --class "$class" --staging off \
        --only SP --only BT --only LU --timeout 300 "$npb" "$binary" >"$out-steady.log" 2>&1
    echo "steady pass: $(tail -1 "$out-steady.log")"
    steady=(--steady "$out-steady")
fi
python3 "$here/model_table.py" "$out" "${steady[@]}" | tee "$out/table.md"
