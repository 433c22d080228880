#!/usr/bin/env python3
"""Runs the Yosegi benchmark programs with `yosegi run --stats`, checks each result against a gcc
build of the same program at the same size, and prints a markdown table of time per step,
GFLOP/s, achieved GB/s and the fraction of the measured copy ceiling.

Called by bench/run.sh (which measures the ceiling); standard library only, because the GPU
machine has python3 but no network.

Times come from the runtime's `--stats` table (crates/yosegi-rt/src/runtime/stats.rs): the
per-kernel wall time summed over launches, and, when the device reports it, "kernel time on the
device (ms)" (CUDA events). Every kernel a program launches belongs to its timed loop, so time per
step is the total over all kernels divided by the number of steps.

`--staging-compare` runs every case with `--staging off` (global memory only), `auto` and `on`
in one invocation and adds a table of the three times, the speed-ups over global memory, and for
the seed's 1-D diffusion experiment (`--seed-experiment`: sizes 8192..65536, 1000 steps) the
seed's own staged/global ratios beside ours.
"""

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?|[-+]?(?:nan|inf)", re.IGNORECASE)
KERNEL_ROW = re.compile(r"^(\S+)\s+(\d+)\s+([0-9.]+)\s*$")
DEVICE_TIME_ROW = re.compile(r"^kernel time on the device \(ms\)\s+([0-9.]+)\s*$")


class Check:
    """One printed line compared with the reference: every number on the line whose text matches
    `line`, within |got - want| <= atol + rtol * |want| (rtol 0 and atol 0: exact)."""

    def __init__(self, line, rtol, atol=0.0):
        self.line = re.compile(line)
        self.rtol = rtol
        self.atol = atol


class Case:
    def __init__(self, program, size, source, defines=(), args=(), steps=None, steps_from=None,
                 points=0, bytes_per_step=0.0, flops_per_step=0.0, checks=(), reference=True,
                 note="", source_patch=None, reference_patch=None):
        self.program = program
        self.size = size
        self.source = source
        self.defines = list(defines)
        self.args = [str(a) for a in args]
        # Either a fixed step count or a regex on stdout whose group 1 is the count.
        self.steps = steps
        self.steps_from = re.compile(steps_from) if steps_from else None
        self.points = points
        self.bytes_per_step = bytes_per_step
        self.flops_per_step = flops_per_step
        self.checks = list(checks)
        self.reference = reference
        self.note = note
        self.source_patch = source_patch
        # Applied to the source of the gcc reference only (text -> text, or None when the source
        # no longer has the expected shape).
        self.reference_patch = reference_patch

    @property
    def name(self):
        return f"{self.program}-" + re.sub(r"[^A-Za-z0-9]+", "_", self.size)


# ---------------------------------------------------------------------------------------------
# Programs: bytes and flops each step must move / do (bench/NOTES.md gives the reasoning).

HIMENO_SIZES = {"TINY": (17, 17, 33), "XS": (33, 33, 65), "S": (65, 65, 129), "M": (129, 129, 257),
                "L": (257, 257, 513), "XL": (513, 513, 1025)}
# Against the reference below, which sums gosa in double: a serial float sum of millions of
# squares is itself off by percents (2% at M), while the device's tree reduction is close to exact.
HIMENO_CHECKS = [Check(r"^\s*Gosa :", 5e-3)]
XL_BRANCH = "#elif defined(SIZE_XL)\n#define MIMAX 513\n#define MJMAX 513\n#define MKMAX 1025\n"


def himeno_xl_patch(text):
    """examples/himeno.c stops at SIZE_L; XL (513x513x1025, ~15 GB of static arrays) is the same
    program with one more size branch. Returns None when the source no longer has the shape this
    patch expects."""
    if "SIZE_XL" in text:
        return text
    anchor = "#elif defined(SIZE_L)\n"
    if anchor not in text:
        return None
    return text.replace(anchor, XL_BRANCH + anchor, 1)


def himeno_exact_gosa(text):
    """The gcc reference accumulates gosa in double (the value a tree reduction approaches)."""
    anchor = "\n    float gosa = 0.0f;\n"
    if anchor not in text:
        return None
    return text.replace(anchor, "\n    double gosa = 0.0;\n", 1)


def himeno(size, nn, reference=True, note=""):
    mi, mj, mk = HIMENO_SIZES[size]
    # imax = MIMAX - 1 and the loops run 1 .. imax - 2.
    points = (mi - 3) * (mj - 3) * (mk - 3)
    return Case("himeno", size, "examples/himeno.c", defines=[f"SIZE_{size}", f"NN={nn}"],
                steps=nn + 3,  # the rehearsal's 3 iterations run the same kernels
                points=points, bytes_per_step=64.0 * points, flops_per_step=34.0 * points,
                checks=HIMENO_CHECKS, reference=reference, note=note,
                source_patch=himeno_xl_patch if size == "XL" else None,
                reference_patch=himeno_exact_gosa)


def jacobi2d(n, sweeps):
    points = (n - 2) ** 2
    return Case("jacobi2d", f"{n}^2", "examples/jacobi2d.c", args=[n, sweeps],
                steps_from=r"sweeps: (\d+)", points=points,
                bytes_per_step=32.0 * points, flops_per_step=6.0 * points,
                checks=[Check(r"^sweeps:", 1e-6, 1e-6)])


def diffusion1d(n, steps, reference=True, note=""):
    points = n - 2
    return Case("diffusion1d", str(n), "examples/diffusion1d.c", args=[n, steps], steps=steps,
                points=points, bytes_per_step=16.0 * points, flops_per_step=5.0 * points,
                checks=[Check(r"^heat:", 1e-8, 1e-12)], reference=reference, note=note)


def diffusion_wide(n, steps, reference=True, note=""):
    points = n - 16
    # u read and un written once per point (the 17 reads of u hit cache or a staged tile);
    # flops: 8 pairs x (2 adds, 1 sub, 1 mul, 1 div) + 8 adds of the pairs + 2 for r and u.
    return Case("diffusion_wide", str(n), "examples/diffusion_wide.c", args=[n, steps], steps=steps,
                points=points, bytes_per_step=16.0 * points, flops_per_step=50.0 * points,
                checks=[Check(r"^heat:", 1e-8, 1e-12)], reference=reference, note=note)


def wide_stencil_f32(n, steps, reference=True, note=""):
    points = n - 16
    # u read and un written once per point in floats (the 18 reads of u hit cache or a staged
    # tile); flops: 8 pair adds, 8 products and 8 adds of them, c0*u[i] and u + ...: 26.
    return Case("wide_stencil_f32", str(n), "examples/wide_stencil_f32.c", args=[n, steps], steps=steps,
                points=points, bytes_per_step=8.0 * points, flops_per_step=26.0 * points,
                # The GPU contracts the products and sums into FMAs; gcc -O2 does not.
                checks=[Check(r"^heat:", 1e-5)], reference=reference, note=note)


def matmul_vec(n, m, reps):
    # b read once (4 bytes per element of the M x N matrix), a once per block (negligible), c read
    # and written once per repetition; 2 flops per element of b.
    return Case("matmul_vec", f"{n}x{m}", "examples/matmul_vec.c", args=[n, m, reps], steps=reps,
                points=n, bytes_per_step=4.0 * n * m + 8.0 * n + 4.0 * m, flops_per_step=2.0 * n * m,
                # The GPU contracts a*b + c into one FMA (NVRTC's default); gcc -O2 does not.
                checks=[Check(r"^c:", 1e-4)])


def heat3d(n, steps):
    points = (n - 2) ** 3
    return Case("heat3d", f"{n}^3", "examples/heat3d.c", args=[n, steps], steps=steps,
                points=points, bytes_per_step=16.0 * points, flops_per_step=9.0 * points,
                checks=[Check(r"^heat:", 1e-8, 1e-12)])


def row_scan(rows, reps):
    # a read and b written once per element (32 floats per row); a multiply and an add each.
    return Case("row_scan", str(rows), "examples/row_scan.c", defines=[f"ROWS={rows}"], args=[reps], steps=reps,
                points=rows, bytes_per_step=256.0 * rows, flops_per_step=64.0 * rows,
                checks=[Check(r"^b:", 1e-5)])


def cg(m, iters):
    rows = m * m
    nnz = 5 * m * m - 4 * m
    # SpMV: values and column indices once, row pointers, p gathered (assumed cached, read once),
    # q written; then dot(p,q) 16, x/r update with r.r 48, p update 24 bytes per row.
    spmv = nnz * (8 + 4) + rows * (4 + 8 + 8)
    return Case("cg", f"{m}^2", "examples/cg.c", args=[m, iters, 0], steps_from=r"iterations: (\d+)",
                points=rows, bytes_per_step=float(spmv + rows * (16 + 48 + 24)),
                flops_per_step=float(2 * nnz + 10 * rows),
                checks=[Check(r"^iterations:", 1e-4), Check(r"^x sum:", 1e-6)])


def size_set(name):
    if name == "tiny":
        return [
            himeno("TINY", 2),
            jacobi2d(24, 15),
            diffusion1d(64, 10),
            diffusion1d(96, 4, reference=False, note="no reference (exercises the skip path)"),
            diffusion_wide(300, 4),
            wide_stencil_f32(300, 4),
            heat3d(10, 3),
            cg(8, 6),
            matmul_vec(300, 40, 2),
            row_scan(1000, 2),
        ]
    xl_note = "no gcc reference at XL (15 GB of static arrays, minutes on one core)"
    return [
        himeno("M", 100),
        himeno("L", 50),
        himeno("XL", 20, reference=False, note=xl_note),
        jacobi2d(4096, 500),
        jacobi2d(8192, 200),
        diffusion1d(8192, 1000),
        diffusion1d(16384, 1000),
        diffusion1d(32768, 1000),
        diffusion1d(65536, 1000),
        diffusion1d(1 << 26, 200),
        diffusion_wide(65536, 1000),
        diffusion_wide(1 << 20, 1000),
        diffusion_wide(1 << 22, 500),
        diffusion_wide(1 << 26, 100),
        wide_stencil_f32(1 << 20, 1000),
        wide_stencil_f32(1 << 22, 500),
        wide_stencil_f32(1 << 24, 200),
        wide_stencil_f32(1 << 26, 100),
        heat3d(256, 200),
        heat3d(512, 50),
        cg(1024, 200),
        cg(4096, 100),
        # b of 32 MB stays in the H100's 50 MB L2 across repetitions; the others stream from DRAM.
        matmul_vec(8192, 1024, 200),
        matmul_vec(16384, 512, 200),
        matmul_vec(65536, 1024, 20),
        matmul_vec(1 << 20, 256, 10),
        row_scan(1 << 20, 20),
        row_scan(1 << 22, 10),
    ]


# The seed's experiment (../shared/seeds/README.md, section 000): 1-D diffusion, sizes 8192..65536,
# 1000 steps; execution time of the staged code relative to the global-memory code, as ranges over
# the four sizes on each GPU of the paper. Shown beside our ratio for the same sizes.
SEED_DIFFUSION_SIZES = (8192, 16384, 32768, 65536)
SEED_DIFFUSION_RATIOS = "C2050 88.7-97.6%, GTX 680 27.1-60.5%, TITAN 58.7-65.6%"


def seed_ratio(case):
    """The seed's staged/global time ratios for the case, or None when the seed did not run it."""
    if case.program == "diffusion1d" and case.size in {str(n) for n in SEED_DIFFUSION_SIZES}:
        return SEED_DIFFUSION_RATIOS
    return None


def seed_cases():
    """The seed's experiment: 1-D diffusion at its four sizes, 1000 steps."""
    return [diffusion1d(n, 1000) for n in SEED_DIFFUSION_SIZES]


# The `--staging` values a staging comparison runs each case with: global memory only first (the
# baseline every ratio divides), then the runtime's choice, then staged variants always.
STAGING_COMPARE_MODES = ("off", "auto", "on")
STAGED_VARIANT = re.compile(r"_staged(_[xz][0-9]+)?$")


# ---------------------------------------------------------------------------------------------
# Parsing

def parse_stats(stderr):
    """Per-kernel (launches, wall ms) and the device's own kernel time (ms) or None."""
    kernels = {}
    device_ms = None
    in_table = False
    for line in stderr.splitlines():
        if line.startswith("=== yosegi stats ==="):
            in_table = True
            continue
        if not in_table:
            continue
        if line.startswith("kernel ") and "launches" in line:
            continue
        m = DEVICE_TIME_ROW.match(line)
        if m:
            device_ms = float(m.group(1))
            continue
        m = KERNEL_ROW.match(line)
        if m:
            kernels[m.group(1)] = (int(m.group(2)), float(m.group(3)))
    return kernels, device_ms


def numbers(line):
    return [float(x) for x in NUMBER.findall(line)]


def compare(case, got, want):
    """(passed, explanation) for the case's checks on two stdouts."""
    problems = []
    for check in case.checks:
        g = next((l for l in got.splitlines() if check.line.search(l)), None)
        w = next((l for l in want.splitlines() if check.line.search(l)), None)
        if g is None or w is None:
            problems.append(f"line /{check.line.pattern}/ missing from {'yosegi' if g is None else 'gcc'}")
            continue
        gn, wn = numbers(g), numbers(w)
        if len(gn) != len(wn):
            problems.append(f"'{g.strip()}' vs '{w.strip()}'")
            continue
        for a, b in zip(gn, wn):
            if not abs(a - b) <= check.atol + check.rtol * abs(b):
                problems.append(f"'{g.strip()}' vs gcc '{w.strip()}' (rtol {check.rtol:g})")
                break
    return (not problems), "; ".join(problems)


# ---------------------------------------------------------------------------------------------
# Running

def yosegi_command(binary, device, case, source, staging=None):
    """The `yosegi run` command line of one timed run; `staging` is a `--staging` value or None
    for the binary's default."""
    cmd = [binary, "run", "--device", device, "--stats"]
    if staging:
        cmd += ["--staging", staging]
    return cmd + [*[f"-D{d}" for d in case.defines], source, "--", *case.args]


class Bench:
    def __init__(self, opts):
        self.opts = opts
        self.out = opts.out
        self.logs = os.path.join(self.out, "logs")
        self.srcdir = os.path.join(self.out, "src")
        os.makedirs(self.logs, exist_ok=True)
        os.makedirs(self.srcdir, exist_ok=True)

    def source_for(self, case):
        path = os.path.join(REPO, case.source)
        if case.source_patch is None:
            return path, None
        with open(path) as f:
            text = case.source_patch(f.read())
        if text is None:
            return None, f"{case.source} has no SIZE_L branch to extend; add SIZE_XL there"
        patched = os.path.join(self.srcdir, f"{case.name}.c")
        with open(patched, "w") as f:
            f.write(text)
        return patched, None

    def log(self, name, text):
        with open(os.path.join(self.logs, name), "w") as f:
            f.write(text)

    def reference(self, case, source):
        """gcc -O2 build and run (pragmas ignored); returns (stdout or None, note)."""
        exe = os.path.join(self.srcdir, f"{case.name}.ref")
        if case.reference_patch is not None:
            with open(source) as f:
                text = case.reference_patch(f.read())
            if text is None:
                return None, f"{case.source} no longer has the line the reference patch changes"
            source = os.path.join(self.srcdir, f"{case.name}.ref.c")
            with open(source, "w") as f:
                f.write(text)
        cmd = [self.opts.cc, "-O2", "-std=gnu11", "-w", *[f"-D{d}" for d in case.defines], "-o", exe,
               source, "-lm"]
        build = subprocess.run(cmd, capture_output=True, text=True)
        if build.returncode != 0:
            self.log(f"{case.name}.ref.build", " ".join(cmd) + "\n" + build.stderr)
            return None, "gcc build failed"
        try:
            run = subprocess.run([exe, *case.args], capture_output=True, text=True, timeout=self.opts.timeout)
        except subprocess.TimeoutExpired:
            return None, f"gcc reference timed out after {self.opts.timeout} s"
        self.log(f"{case.name}.ref.out", run.stdout + run.stderr)
        if run.returncode != 0:
            return None, f"gcc reference exited {run.returncode}"
        return run.stdout, ""

    def yosegi_once(self, case, source, k, staging=None):
        cmd = yosegi_command(self.opts.binary, self.opts.device, case, source, staging)
        started = time.time()
        try:
            run = subprocess.run(cmd, capture_output=True, text=True, timeout=self.opts.timeout)
        except subprocess.TimeoutExpired:
            return {"error": f"timed out after {self.opts.timeout} s"}
        wall = time.time() - started
        tag = f"{case.name}.staging_{staging}" if staging else case.name
        self.log(f"{tag}.run{k}.out", run.stdout)
        self.log(f"{tag}.run{k}.err", " ".join(cmd) + "\n" + run.stderr)
        if run.returncode != 0:
            tail = run.stderr.strip().splitlines()[-3:]
            return {"error": f"exit {run.returncode}: " + " | ".join(tail)}
        kernels, device_ms = parse_stats(run.stderr)
        if not kernels:
            return {"error": "no kernel rows in the --stats output"}
        if case.steps is not None:
            steps = case.steps
        else:
            m = case.steps_from.search(run.stdout)
            if not m:
                return {"error": f"no /{case.steps_from.pattern}/ in the output"}
            steps = int(m.group(1))
        kernel_ms = sum(t for _, t in kernels.values())
        main = max(kernels.items(), key=lambda kv: kv[1][1])
        # Staged variants are `<kernel>_staged` and the coarsened `<kernel>_staged_x<n>`.
        staged = sorted(name for name in kernels if STAGED_VARIANT.search(name))
        # In auto mode a staged variant runs a few times while the runtime times the candidates;
        # it was kept when it ran more often than its global sibling.
        kept = [name for name in staged if kernels[name][0] > kernels.get(STAGED_VARIANT.sub("", name), (0, 0.0))[0]]
        return {"stdout": run.stdout, "steps": steps, "kernels": kernels, "kernel_ms": kernel_ms,
                "staged_kernels": staged, "kept_staged": kept,
                "device_ms": device_ms, "main_kernel": main[0],
                "main_kernel_mean_ms": main[1][1] / main[1][0], "process_s": wall}

    def run_case(self, case, source, reference_job, staging=None):
        runs = [self.yosegi_once(case, source, k, staging) for k in range(self.opts.runs)]
        row = {"program": case.program, "size": case.size, "points": case.points,
               "bytes_per_step": case.bytes_per_step, "flops_per_step": case.flops_per_step,
               "note": case.note, "staging": staging, "runs": []}
        errors = [r["error"] for r in runs if "error" in r]
        good = [r for r in runs if "error" not in r]
        row["runs"] = [{k: v for k, v in r.items() if k != "stdout"} for r in runs]
        if errors:
            row["check"] = "ERROR"
            row["detail"] = errors[0]
            if reference_job is not None:
                reference_job.result()
            return row
        row["steps"] = good[0]["steps"]
        row["wall_ms_per_step"] = statistics.median(r["kernel_ms"] / r["steps"] for r in good)
        device = [r["device_ms"] for r in good if r["device_ms"] is not None]
        row["device_ms_per_step"] = (statistics.median(d / r["steps"] for d, r in zip(device, good))
                                     if len(device) == len(good) else None)
        row["main_kernel"] = good[0]["main_kernel"]
        row["staged_kernels"] = good[0]["staged_kernels"]
        row["kept_staged"] = good[0]["kept_staged"]
        row["main_kernel_mean_ms"] = statistics.median(r["main_kernel_mean_ms"] for r in good)
        per_step_ms = row["device_ms_per_step"] or row["wall_ms_per_step"]
        seconds = per_step_ms * 1e-3
        row["gflops"] = case.flops_per_step / seconds * 1e-9 if seconds > 0 else None
        row["gbs"] = case.bytes_per_step / seconds * 1e-9 if seconds > 0 else None
        row["pct_ceiling"] = (100.0 * row["gbs"] / self.opts.ceiling_gbs
                              if self.opts.ceiling_gbs and row["gbs"] else None)
        # Runs at the same size must agree with each other, then with gcc.
        outputs = {r["stdout"] for r in good}
        if reference_job is None:
            row["check"] = "skipped"
            row["detail"] = case.note or "no reference"
            return row
        want, why = reference_job.result()
        if want is None:
            row["check"] = "NO-REF"
            row["detail"] = why
            return row
        verdicts = [compare(case, got, want) for got in outputs]
        failed = [d for ok, d in verdicts if not ok]
        row["check"] = "FAIL" if failed else "PASS"
        row["detail"] = failed[0] if failed else ""
        return row

    def run(self, cases, modes=(None,)):
        """One row per case and `--staging` mode (None: the binary's default), cases in order,
        modes within a case in the order given; each case's gcc reference is run once."""
        jobs = max(1, self.opts.ref_jobs)
        rows = []
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            prepared = []
            for case in cases:
                source, problem = self.source_for(case)
                if source is None:
                    prepared.append((case, None, None, problem))
                    continue
                job = (pool.submit(self.reference, case, source)
                       if case.reference and not self.opts.no_reference else None)
                prepared.append((case, source, job, ""))
            for case, source, job, problem in prepared:
                if source is None:
                    for mode in modes:
                        rows.append({"program": case.program, "size": case.size, "check": "SKIPPED",
                                     "detail": problem, "staging": mode, "runs": []})
                    continue
                for mode in modes:
                    label = f" --staging {mode}" if mode else ""
                    print(f"bench: {case.name}{label} x{self.opts.runs} ...", file=sys.stderr, flush=True)
                    row = self.run_case(case, source, job, mode)
                    row["seed_ratio"] = seed_ratio(case)
                    rows.append(row)
        return rows


# ---------------------------------------------------------------------------------------------
# Report

def fmt(value, digits):
    if value is None:
        return "-"
    # Sim rates are tiny; keep three significant digits rather than printing 0.00.
    if 0 < abs(value) < 10 ** -(digits - 2):
        return f"{value:.3g}"
    return f"{value:.{digits}f}"


def table(rows):
    lines = []
    lines.append(f"| program | size | steps | ms/step (device) | ms/step (wall) | main kernel mean, wall (ms) "
                 f"| GFLOP/s | GB/s | % of copy ceiling | check |")
    lines.append("|---|---|---:|---:|---:|---:|---:|---:|---:|---|")
    for r in rows:
        check = r["check"]
        if r.get("detail") and check != "PASS":
            check += f" ({r['detail']})"
        program = r["program"] + (f" (--staging {r['staging']})" if r.get("staging") else "")
        lines.append("| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |".format(
            program, r["size"], r.get("steps", "-"),
            fmt(r.get("device_ms_per_step"), 4), fmt(r.get("wall_ms_per_step"), 4),
            fmt(r.get("main_kernel_mean_ms"), 4), fmt(r.get("gflops"), 2), fmt(r.get("gbs"), 1),
            fmt(r.get("pct_ceiling"), 1), check.replace("|", "/")))
    return "\n".join(lines)


def per_step_ms(row):
    """The row's time per step: the device's own when it reported one, else the wall time."""
    return row.get("device_ms_per_step") or row.get("wall_ms_per_step")


def staging_groups(rows):
    """Rows of a staging comparison grouped per case: [(program, size, {mode: row})], in order."""
    groups = []
    for r in rows:
        key = (r["program"], r["size"])
        if not groups or groups[-1][:2] != key:
            groups.append((r["program"], r["size"], {}))
        groups[-1][2][r.get("staging")] = r
    return groups


def ratio(numerator, denominator):
    if numerator is None or denominator is None or denominator <= 0:
        return None
    return numerator / denominator


def speedup(value):
    """A speed-up with two decimals always: 0.98 against 1.00 is the verdict the table exists for."""
    return "-" if value is None else f"{value:.2f}"


def staging_table(rows):
    """Markdown: per case the time per step with `--staging off` (global memory only), `auto` and
    `on`, the speed-up of each over off (> 1 is faster), staged time as % of global time (the
    seed's measure) beside the seed's own figures, which variant auto kept (a staged variant that
    only ran while being timed was not kept), and the checks."""
    lines = ["| program | size | off ms/step | auto ms/step | on ms/step | auto speed-up | on speed-up "
             "| on time % of off | seed's staged time % of global | auto kept | check (off / auto / on) |",
             "|---|---|---:|---:|---:|---:|---:|---:|---|---|---|"]
    for program, size, by_mode in staging_groups(rows):
        times = {m: per_step_ms(r) if r.get("check") in ("PASS", "skipped") else None for m, r in by_mode.items()}
        off = times.get("off")
        on_pct = ratio(times.get("on"), off)
        seed = next((r.get("seed_ratio") for r in by_mode.values() if r.get("seed_ratio")), None)
        auto = by_mode.get("auto", {})
        staged = auto.get("staged_kernels")
        kept = auto.get("kept_staged") or []
        if staged is None:
            kept_cell = "-"
        elif kept:
            kept_cell = "staged (" + ", ".join(kept) + ")"
        elif staged:
            kept_cell = "global (staged timed, slower)"
        else:
            kept_cell = "global (no staged variant)"
        checks = []
        for m in STAGING_COMPARE_MODES:
            r = by_mode.get(m)
            if r is None:
                checks.append("-")
            elif r.get("detail") and r["check"] != "PASS":
                checks.append(f"{r['check']} ({r['detail']})")
            else:
                checks.append(r["check"])
        check_cell = checks[0] if len(set(checks)) == 1 else " / ".join(checks)
        lines.append("| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |".format(
            program, size, fmt(off, 4), fmt(times.get("auto"), 4), fmt(times.get("on"), 4),
            speedup(ratio(off, times.get("auto"))), speedup(ratio(off, times.get("on"))),
            fmt(100.0 * on_pct if on_pct is not None else None, 1), seed or "-",
            kept_cell,
            check_cell.replace("|", "/")))
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("binary")
    ap.add_argument("--device", default="cuda", choices=["cuda", "sim"])
    ap.add_argument("--sizes", default="full", choices=["full", "tiny"])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--only", default="", help="comma-separated program names (himeno,jacobi2d,...) or case names")
    ap.add_argument("--ceiling-gbs", type=float, default=None)
    ap.add_argument("--ceiling-note", default="")
    ap.add_argument("--out", help="directory for logs and results (required for a run)")
    ap.add_argument("--cc", default=os.environ.get("CC", "gcc"))
    ap.add_argument("--ref-jobs", type=int, default=max(1, min(8, (os.cpu_count() or 2) - 2)))
    ap.add_argument("--no-reference", action="store_true")
    ap.add_argument("--timeout", type=int, default=300, help="seconds per yosegi or reference run")
    ap.add_argument("--staging", choices=["auto", "on", "off"], default=None,
                    help="pass --staging to every run (default: the binary's default)")
    ap.add_argument("--staging-compare", action="store_true",
                    help="run every case with --staging off, auto and on, and print the comparison table")
    ap.add_argument("--seed-experiment", action="store_true",
                    help="only the seed's 1-D diffusion experiment (sizes 8192..65536, 1000 steps)")
    ap.add_argument("--print-xl-source", action="store_true",
                    help="print examples/himeno.c with the SIZE_XL branch and exit")
    opts = ap.parse_args()

    if opts.print_xl_source:
        with open(os.path.join(REPO, "examples/himeno.c")) as f:
            text = himeno_xl_patch(f.read())
        if text is None:
            sys.exit("examples/himeno.c has no SIZE_L branch to extend")
        sys.stdout.write(text)
        return 0

    if not opts.out:
        sys.exit("bench: --out DIR is required")
    if shutil.which(opts.binary) is None and not os.access(opts.binary, os.X_OK):
        sys.exit(f"bench: {opts.binary} is not an executable")
    opts.binary = os.path.abspath(opts.binary) if os.path.exists(opts.binary) else opts.binary
    cases = seed_cases() if opts.seed_experiment else size_set(opts.sizes)
    if opts.only:
        wanted = set(opts.only.split(","))
        cases = [c for c in cases if c.program in wanted or c.name in wanted]
        if not cases:
            sys.exit(f"bench: --only {opts.only} matches no case")
    modes = STAGING_COMPARE_MODES if opts.staging_compare else (opts.staging,)
    rows = Bench(opts).run(cases, modes)

    if opts.staging_compare:
        md = staging_table(rows) + "\n\nPer run:\n\n" + table(rows)
    else:
        md = table(rows)
    sizes = "seed experiment" if opts.seed_experiment else opts.sizes
    staging = "compare off/auto/on" if opts.staging_compare else (opts.staging or "default")
    header = [f"device: {opts.device}, runs per case: {opts.runs}, sizes: {sizes}, staging: {staging}"]
    if opts.ceiling_gbs:
        header.append(f"copy ceiling: {opts.ceiling_gbs:.1f} GB/s {opts.ceiling_note}".rstrip())
    else:
        header.append(f"copy ceiling: not measured {opts.ceiling_note}".rstrip())
    text = "\n".join(header) + "\n\n" + md + "\n"
    print(text)
    with open(os.path.join(opts.out, "results.md"), "w") as f:
        f.write(text)
    with open(os.path.join(opts.out, "results.json"), "w") as f:
        json.dump({"device": opts.device, "ceiling_gbs": opts.ceiling_gbs, "staging": staging, "rows": rows}, f,
                  indent=1)
    bad = [r for r in rows if r["check"] in ("FAIL", "ERROR", "NO-REF", "SKIPPED")]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
