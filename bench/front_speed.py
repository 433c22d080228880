#!/usr/bin/env python3
"""Front-end speed: parse + lower + map a generated ~5,000-line OpenACC program.

Usage: bench/front_speed.py BINARY [FUNCTIONS]   (default 280 functions, ~5,300 lines)
Times `yosegi explain` (preprocess with cpp, parse, lower, map, print) five times after one
warm-up and prints the median; the goal (issue: foundation) is under 0.2 s. `cpp` alone is
timed too, since it is part of the figure and outside our code.
"""
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FUNCTION = """static double kernel_{i}(int n, double *restrict a, const double *restrict b, Vec *w) {{
    double sum = 0.0;
#pragma acc data copyin(b[0:n]) copy(a[0:n])
    {{
#pragma acc parallel loop gang vector reduction(+:sum) present(a[0:n], b[0:n])
        for (int i = 0; i < n; i++) {{
            a[i] = a[i] * 2.0 + b[i] / (double)(i + {i});
            sum += a[i] > 0 ? a[i] : -a[i];
        }}
#pragma acc parallel loop collapse(2)
        for (int j = 0; j < n; j++)
            for (int k = 0; k < 4; k++)
                a[j] += k * w->v[k % w->n];
    }}
    if (sum > 1e9) {{ printf("big %d\\n", {i}); }}
    return sum;
}}

"""


def median_seconds(cmd, runs=5):
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    binary = sys.argv[1]
    functions = int(sys.argv[2]) if len(sys.argv) > 2 else 280
    src = "#include <stdio.h>\n#include <stdlib.h>\ntypedef struct { int n; double *v; } Vec;\n"
    src += "".join(FUNCTION.format(i=i) for i in range(functions)) + "int main(void) { return 0; }\n"
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "big.c"
        path.write_text(src)
        lines = src.count("\n")
        total = median_seconds([binary, "explain", str(path)])
        cpp = median_seconds(["cpp", "-E", "-fopenacc", "-x", "c", str(path)])
    print(f"{lines} lines, {2 * functions} regions: yosegi explain {total * 1000:.1f} ms (median of 5), "
          f"of which cpp alone {cpp * 1000:.1f} ms; goal < 200 ms")


if __name__ == "__main__":
    main()
