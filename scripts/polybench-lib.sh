# What the PolyBench-ACC scripts (scripts/polybench.sh, bench/npb-gcc.sh) share: sourced, not
# run. Needs bash, grep, paste and awk.

# The -D flags that run a PolyBench program at a dataset its source overrides.
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

# Compares two PolyBench dumps (files $1, the reference, and $2) number by number: equal text,
# or within 1e-6 relative, or within the last digit the reference prints; a nan or inf agrees
# only with the same text. Prints nothing when they agree, else where they first differ.
compare_dumps() {
    local re='[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?|nan|inf'
    paste -d , <(grep -oE "$re" "$1") <(grep -oE "$re" "$2") | awk -F , '
        function abs(v) { return v < 0 ? -v : v }
        { if ($1 != "") nref++; if ($2 != "") ngot++ }
        bad == "" && $1 != "" && $2 != "" && ($1 "") != ($2 "") {
            a = $1; b = $2
            if (a ~ /nan|inf/ || b ~ /nan|inf/) { bad = "number " NR - 1 ": " b ", the reference " a; next }
            x = a + 0; y = b + 0
            digits = index(a, ".") ? length(substr(a, index(a, ".") + 1)) : 0
            tol = 1e-6 * (abs(x) > abs(y) ? abs(x) : abs(y))
            if (tol < 1.01 * 10 ^ (-digits)) tol = 1.01 * 10 ^ (-digits)
            if (abs(x - y) > tol) bad = "number " NR - 1 ": " b ", the reference " a
        }
        END {
            if (nref == 0) print "the reference dumped no numbers"
            else if (nref != ngot) print ngot + 0 " numbers dumped, the reference dumps " nref
            else if (bad != "") print bad
        }'
}
