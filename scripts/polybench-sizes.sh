# The -D flags that run a PolyBench program at a dataset its source overrides: sourced, not
# run (scripts/polybench.sh, bench/npb-gcc.sh).
#
# A program whose source defines a dataset itself (correlation.c starts with
# `#define EXTRALARGE_DATASET`) ignores -D<DATASET>_DATASET: both get defined and the later size
# wins. PolyBench lets the user set the sizes instead (the headers skip their tables when the
# sizes are defined), so such a program gets the requested dataset's sizes, read from its
# header. `polybench_forced_sizes SOURCE DATASET` prints them, one a line; nothing for other
# programs.
polybench_forced_sizes() {
    local src=$1 dataset=$2 header=${1%.c}.h
    grep -q "^#[[:space:]]*define[[:space:]]\+[A-Z]*_DATASET" "$src" || return 0
    grep -q "^#[[:space:]]*define[[:space:]]\+${dataset}_DATASET" "$src" && return 0
    [ -f "$header" ] || return 0
    awk -v want="${dataset}_DATASET" '
        $1 == "#" && $2 == "ifdef" { inside = ($3 == want); next }
        $1 ~ /^#[[:space:]]*ifdef$/ { inside = ($2 == want); next }
        /^#[[:space:]]*endif/ { inside = 0; next }
        inside && $1 == "#" && $2 == "define" { print "-D" $3 "=" $4; next }
        inside && $1 == "#define" { print "-D" $2 "=" $3 }
    ' "$header"
}
