#!/usr/bin/env python3
"""`--fusion auto` against `--fusion off` on every program where the two differ.

Issue 15's goal: `auto` is never slower than unfused by more than 2% on any program in
`examples/` or the benchmarks. The examples without a chain or a step kernel compile to the
same kernels and host code under both (the script checks this with `yosegi emit` and lists
them); the others run here:

* a first `auto` run on empty caches (it compiles the fused kernels and explores: "cold");
* a warm-up `off` run;
* ROUNDS rounds of both, `off` first in even rounds and `auto` first in odd ones, the medians
  of the program's own `time:` line compared (the tuning cache holds `auto`'s choice after the
  first run, as it does for a user);
* one `--stats` run of each: the kernels' device time (what fusion changes; the wall time of
  a short run also holds the host's pageable copies in and out, which vary by several percent
  from run to run), and the decision lines that say what `auto` chose.

Every run's answers (the `heat:`/`checksums` lines) must agree with the first `off` run's to
1e-9 relative, else the row says FAIL.

    bench/fusion_auto.py [--rounds R] [--only NAME,...] [--device cuda|sim --tiny] BINARY

Logs and results.md go to $OUT when set (the GPU runner), else bench/out/fusion_auto/.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# name, source, args (full sizes)
CASES = [
    ("diffusion1d-8192", "examples/diffusion1d.c", "8192 1000"),
    ("diffusion1d-65536", "examples/diffusion1d.c", "65536 1000"),
    ("diffusion1d-2^26", "examples/diffusion1d.c", f"{1 << 26} 200"),
    ("diffusion_wide-65536", "examples/diffusion_wide.c", "65536 1000"),
    ("diffusion_wide-2^20", "examples/diffusion_wide.c", f"{1 << 20} 1000"),
    ("diffusion_wide-2^22", "examples/diffusion_wide.c", f"{1 << 22} 500"),
    ("diffusion_wide-2^22x5000", "examples/diffusion_wide.c", f"{1 << 22} 5000"),
    ("diffusion_wide-2^26", "examples/diffusion_wide.c", f"{1 << 26} 100"),
    ("wide_stencil_f32-2^20", "examples/wide_stencil_f32.c", f"{1 << 20} 1000"),
    ("wide_stencil_f32-2^22", "examples/wide_stencil_f32.c", f"{1 << 22} 500"),
    ("wide_stencil_f32-2^24", "examples/wide_stencil_f32.c", f"{1 << 24} 200"),
    ("wide_stencil_f32-2^26", "examples/wide_stencil_f32.c", f"{1 << 26} 100"),
    ("wide_stencil_f32-2^26x1000", "examples/wide_stencil_f32.c", f"{1 << 26} 1000"),
    ("ll18-4096", "bench/fusion/ll18.c", "4096 4096 100"),
    ("ll18-8192", "bench/fusion/ll18.c", "8192 8192 50"),
    ("y_solve-4096", "bench/fusion/y_solve.c", "4096 100"),
    ("y_solve-8192", "bench/fusion/y_solve.c", "8192 50"),
    ("filter-128", "bench/fusion/filter.c", "128 200"),
    ("filter-256", "bench/fusion/filter.c", "256 50"),
    ("jacobi2d_steps-4096", "bench/fusion/jacobi2d_steps.c", "4096 200"),
    ("jacobi2d_steps-8192", "bench/fusion/jacobi2d_steps.c", "8192 100"),
    ("heat3d_steps-256", "bench/fusion/heat3d_steps.c", "256 100"),
    ("heat3d_steps-512", "bench/fusion/heat3d_steps.c", "512 40"),
]
TINY = [
    ("diffusion1d", "examples/diffusion1d.c", "300 20"),
    ("wide_stencil_f32", "examples/wide_stencil_f32.c", "400 12"),
    ("ll18", "bench/fusion/ll18.c", "64 64 2"),
    ("jacobi2d_steps", "bench/fusion/jacobi2d_steps.c", "64 8"),
]
SAME_PROGRAM_CHECKS = ["cg", "row_scan", "heat3d", "himeno", "jacobi2d", "matmul_vec"]

NUMBER = re.compile(r"[-+]?\d+\.\d+(?:[eE][-+]?\d+)?|[-+]?\d+[eE][-+]?\d+")


def answers(text):
    """The numbers of the lines that carry results (not the time)."""
    out = []
    for line in text.splitlines():
        if line.startswith("time:") or "time" in line.split(":")[0]:
            continue
        if re.match(r"^(heat|checksums|sums|sweeps|iterations|x sum|c|b)\b", line):
            out.extend(float(x) for x in NUMBER.findall(line))
    return out


def agree(a, b):
    return len(a) == len(b) and len(a) > 0 and all(abs(x - y) <= 1e-9 * max(abs(x), abs(y), 1e-12) for x, y in zip(a, b))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("binary")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--only", default="")
    parser.add_argument("--device", default="cuda", choices=["cuda", "sim"])
    parser.add_argument("--tiny", action="store_true")
    parser.add_argument("--timeout", type=int, default=300)
    opts = parser.parse_args()
    binary = str(Path(opts.binary).resolve())
    out = Path(os.environ["OUT"]) / "fusion_auto" if os.environ.get("OUT") else ROOT / "bench/out/fusion_auto"
    out.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, MALLOC_MMAP_THRESHOLD_="65536")

    def run(name, mode, args, source, stats=False):
        cmd = [binary, "run", "--device", opts.device, "--fusion", mode] + (["--stats"] if stats else []) + [str(ROOT / source), "--"] + args.split()
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=opts.timeout, env=env)
        except subprocess.TimeoutExpired:
            return None, "", "timeout"
        (out / f"{name}.{mode}.out").write_text(p.stdout)
        (out / f"{name}.{mode}.err").write_text(p.stderr)
        m = re.search(r"time: ([0-9.]+)", p.stdout)
        if p.returncode != 0 or not m:
            return None, p.stdout, f"exit {p.returncode}"
        return float(m.group(1)), p.stdout, p.stderr

    lines = []
    say = lambda s="": (print(s, flush=True), lines.append(s))
    say(f"# `--fusion auto` against `off`, {opts.rounds} rounds, device {opts.device}")
    # The examples where both modes compile to the same program.
    with tempfile.TemporaryDirectory() as tmp:
        same = []
        for name in SAME_PROGRAM_CHECKS:
            source = ROOT / "examples" / f"{name}.c"
            defines = ["-DSIZE_S"] if name == "himeno" else []
            texts = []
            for mode in ("auto", "off"):
                d = Path(tmp) / f"{name}-{mode}"
                subprocess.run([binary, "emit", *defines, "--fusion", mode, "-o", str(d), str(source)], capture_output=True, check=True)
                texts.append({f.name: f.read_text() for f in sorted(d.iterdir())})
            same.append(f"{name} ({'same program' if texts[0] == texts[1] else 'DIFFERENT: time it'})")
        say("examples compiled to the same kernels and host code by both modes: " + ", ".join(same))
    say()
    say("| case | off median (s) | off range | auto median (s) | auto range | auto vs off | device off / auto (ms) | device auto vs off | cold auto (s) | auto chose | check |")
    say("|---|---:|---|---:|---|---:|---:|---:|---:|---|---|")
    wanted = set(filter(None, opts.only.split(",")))
    failed = False
    for name, source, args in (TINY if opts.tiny else CASES):
        if wanted and name not in wanted:
            continue
        check = "PASS"
        cold, _, _ = run(name, "auto", args, source)
        _, base_out, err = run(name, "off", args, source)
        base = answers(base_out)
        times = {"off": [], "auto": []}
        for round_number in range(opts.rounds):
            for mode in ("off", "auto") if round_number % 2 == 0 else ("auto", "off"):
                t, text, err = run(name, mode, args, source)
                if t is None:
                    check = f"FAIL ({mode}: {err[-200:]})"
                    continue
                times[mode].append(t)
                if not agree(base, answers(text)):
                    check = f"FAIL ({mode} answers differ)"
        device = {}
        for mode in ("off", "auto"):
            _, _, text = run(name, mode, args, source, stats=True)
            m = re.search(r"kernel time on the device \(ms\)\s+([0-9.]+)", text)
            device[mode] = float(m.group(1)) if m else float("nan")
        stats = text
        winners = re.findall(r"winner on .*?\): (\S+) \(", stats)
        chose = sorted(set(w for w in winners if w == "unfused" or "_steps" in w or "_fused" in w))
        med = {m: statistics.median(v) if v else float("nan") for m, v in times.items()}
        rng = {m: f"{min(v):.4f}-{max(v):.4f}" if v else "-" for m, v in times.items()}
        ratio = med["off"] / med["auto"] if times["auto"] and times["off"] else float("nan")
        failed |= check != "PASS"
        dev_ratio = device["off"] / device["auto"] if device["auto"] > 0 else float("nan")
        cold_text = f"{cold:.4f}" if cold is not None else "-"
        say(f"| {name} | {med['off']:.4f} | {rng['off']} | {med['auto']:.4f} | {rng['auto']} | {ratio:.3f}x | {device['off']:.2f} / {device['auto']:.2f} | {dev_ratio:.3f}x | {cold_text} | {' '.join(chose) or '-'} | {check} |")
    (out / "results.md").write_text("\n".join(lines) + "\n")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
