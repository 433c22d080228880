#!/usr/bin/env python3
"""The performance model's scaling curves over 1..8 GPUs, beside measured multi-GPU speed-ups.

    bench/scaling_curves.py CURVES [--measured RESULTS.md ...] [--svg PATH]

CURVES holds one folder per case (himeno-L, jacobi2d, ...) of JSON stats from a one-GPU run
(`YOSEGI_STATS_DIR`). Per kernel the stats give `predicted_scaling_s`, the model's time of one
steady launch on 1, 2, ... devices of that GPU (`model::predict_parts`: the slowest part, the
halo exchange over the peer link, a launch and a host read per extra device); a case's curve is
its kernels' launches times those, summed, as a speed-up over one device. RESULTS.md files are
`bench/multi-gpu.sh` tables: per case and count the fastest time any of them gives, over the
one-GPU time, drawn as points. Prints one table and writes
the SVG (default CURVES/scaling.svg).
"""
import json
import os
import re
import sys


def predicted(curves):
    """{case: [kernel seconds on 1..8 devices]} from the stats JSON below `curves`."""
    out = {}
    for case in sorted(os.listdir(curves)):
        folder = os.path.join(curves, case)
        if not os.path.isdir(folder):
            continue
        total = None
        for f in sorted(os.listdir(folder)):
            if not f.endswith(".json"):
                continue
            with open(os.path.join(folder, f)) as fh:
                stats = json.load(fh)
            for k in stats.get("kernels", []):
                curve = k.get("predicted_scaling_s")
                if not curve:
                    continue
                launches = k.get("launches", 0)
                part = [launches * t for t in curve]
                total = part if total is None else [a + b for a, b in zip(total, part)]
        if total:
            out[case] = total
    return out


def measured(paths):
    """{case: {gpus: speed-up}} from multi-gpu.sh tables (logical devices left out): per case
    and count the fastest time any table gives, over the case's one-GPU time."""
    times = {}
    row = re.compile(r"^\| (\S+) \| (\d+)( \(logical[^|]*)? \| ([0-9.]+) \|")
    for path in paths:
        with open(path) as fh:
            for line in fh:
                m = row.match(line)
                if m and not m.group(3):
                    case, gpus, t = m.group(1), int(m.group(2)), float(m.group(4))
                    best = times.setdefault(case, {})
                    best[gpus] = min(t, best.get(gpus, t))
    return {case: {g: by[1] / t for g, t in by.items()} for case, by in times.items() if 1 in by}


COLOURS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b"]


def svg(curves, points, path):
    width, height, pad = 560, 400, 60
    top = max([max(c[0] / t for t in c) for c in curves.values()] + [s for p in points.values() for s in p.values()] + [2.0])
    top = float(int(top) + 1)

    def x(k):
        return pad + (k - 1) / 7 * (width - 2 * pad)

    def y(s):
        return height - pad - s / top * (height - 2 * pad)

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" font-size="11">',
           f'<rect width="{width}" height="{height}" fill="white"/>']
    for k in range(1, 9):
        out.append(f'<line x1="{x(k):.1f}" y1="{pad}" x2="{x(k):.1f}" y2="{height - pad}" stroke="#eee"/>')
        out.append(f'<text x="{x(k):.1f}" y="{height - pad + 14}" text-anchor="middle">{k}</text>')
    s = 0.0
    while s <= top:
        out.append(f'<line x1="{pad}" y1="{y(s):.1f}" x2="{width - pad}" y2="{y(s):.1f}" stroke="#eee"/>')
        out.append(f'<text x="{pad - 4}" y="{y(s) + 4:.1f}" text-anchor="end">{s:g}</text>')
        s += 1.0
    out.append(f'<line x1="{x(1):.1f}" y1="{y(1):.1f}" x2="{x(8):.1f}" y2="{y(8):.1f}" stroke="#aaa" stroke-dasharray="4"/>')
    for i, (case, curve) in enumerate(sorted(curves.items())):
        colour = COLOURS[i % len(COLOURS)]
        line = " ".join(f"{x(k):.1f},{y(curve[0] / curve[k - 1]):.1f}" for k in range(1, len(curve) + 1))
        out.append(f'<polyline points="{line}" fill="none" stroke="{colour}" stroke-width="2"/>')
        for gpus, speedup in sorted(points.get(case, {}).items()):
            out.append(f'<circle cx="{x(gpus):.1f}" cy="{y(speedup):.1f}" r="5" fill="{colour}"><title>{case}: {speedup:.2f}x measured on {gpus}</title></circle>')
        out.append(f'<line x1="{pad + 10}" y1="{pad + 10 + 14 * i}" x2="{pad + 26}" y2="{pad + 10 + 14 * i}" stroke="{colour}" stroke-width="2"/>'
                   f'<text x="{pad + 30}" y="{pad + 14 + 14 * i}">{case}</text>')
    out.append(f'<text x="{width / 2}" y="{height - 20}" text-anchor="middle">GPUs (lines: predicted kernel time; dots: measured run time)</text>')
    out.append(f'<text x="16" y="{height / 2}" text-anchor="middle" transform="rotate(-90 16 {height / 2})">speed-up over one GPU</text>')
    out.append("</svg>")
    with open(path, "w") as fh:
        fh.write("\n".join(out) + "\n")


def main():
    args = sys.argv[1:]
    if not args or args[0].startswith("-"):
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    curves_dir, results, out_svg = args[0], [], None
    i = 1
    while i < len(args):
        if args[i] == "--measured" and i + 1 < len(args):
            results.append(args[i + 1])
            i += 2
        elif args[i] == "--svg" and i + 1 < len(args):
            out_svg = args[i + 1]
            i += 2
        else:
            print(f"scaling_curves.py: unknown argument {args[i]}", file=sys.stderr)
            sys.exit(2)
    curves = predicted(curves_dir)
    if not curves:
        print("no stats with predicted_scaling_s below " + curves_dir, file=sys.stderr)
        sys.exit(1)
    points = measured(results)
    print("| case | predicted speed-up on 1..8 GPUs | pays for (fewest within 5% of the fastest) | measured |")
    print("|---|---|---:|---|")
    for case, curve in sorted(curves.items()):
        speedups = [curve[0] / t for t in curve]
        best = min(curve)
        pays = next(k for k, t in enumerate(curve, start=1) if t <= best * 1.05)
        got = ", ".join(f"{g}: {s:.2f}x" for g, s in sorted(points.get(case, {}).items())) or "-"
        print(f"| {case} | {' '.join(f'{s:.2f}' for s in speedups)} | {pays} | {got} |")
    svg(curves, points, out_svg or os.path.join(curves_dir, "scaling.svg"))


if __name__ == "__main__":
    main()
