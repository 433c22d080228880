#!/usr/bin/env python3
"""The performance model's accuracy from the JSON stats bench/model.sh collected.

    bench/model_table.py DIR [--steady STEADY_DIR]...

Every kernel of every JSON file below DIR with both a measured mean device time and a predicted
one counts once (a kernel of one program at one size): its error is |predicted - measured| /
measured. Prints, per suite (the first folder below DIR) and over all, the kernel count, median
and 90th-percentile error, then the twenty worst kernels; writes DIR/kernels.csv and
DIR/model.svg (predicted against measured, log-log, one dot per kernel, coloured by suite).

Then the variant choice: for every kernel with several variants that ran, the model's choice
(`model_choice`: the fastest steady prediction, the plain variant unless another is predicted 10%
faster) against the one measured fastest (the lower median of the exploration's
timed samples where there are some, else the mean device time less the first launch's loading
of the code), weighted by the kernel's launches. "model alone" is the time lost choosing by the
prediction only; "runtime" is what the runtime's measured choice lost; "left out" counts the
candidates the model kept out of explorations (predicted over 1.5x the fastest); "clear" counts
the kernels whose choice the model predicts 30% faster than every other candidate, which the
runtime takes untimed outside this benchmark (`bench/model.sh` sets `YOSEGI_MODEL_DECIDES=off`
so that every candidate runs), and what those choices lose.

With --steady, the same choice against steady launches: for the kernels whose every candidate
ran 20 launches or more, in DIR or (the plain variant) in a STEADY_DIR of the same programs run
with `--staging off` (matched by program and kernel name), each candidate's mean device time less
its share of a first launch. The exploration's early launches are no measure of some kernels
(bench/NOTES.md run 36: NPB LU's plain `rhs` kernels timed at 20-31 us, steady at 11-14).
"""
import csv
import json
import math
import os
import sys


def percentile(values, q):
    if not values:
        return float("nan")
    s = sorted(values)
    k = (len(s) - 1) * q
    lo, hi = math.floor(k), math.ceil(k)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


def stats_files(root):
    """(folder, stats) for every readable JSON stats file below `root`, in a fixed order."""
    for dirpath, dirs, files in os.walk(root):
        dirs.sort()
        for f in sorted(files):
            if not f.endswith(".json"):
                continue
            try:
                with open(os.path.join(dirpath, f)) as fh:
                    stats = json.load(fh)
            except (OSError, ValueError):
                continue
            yield dirpath, stats


def collect(root):
    rows = []
    for dirpath, stats in stats_files(root):
        rel = os.path.relpath(dirpath, root).split(os.sep)
        suite = rel[0]
        program = "/".join(rel[1:]) or os.path.basename((stats.get("program") or ["?"])[0])
        if suite in ("polybench", "npb"):
            program = os.path.basename((stats.get("program") or ["?"])[0])
        for k in stats.get("kernels", []):
            measured, predicted = k.get("mean_device_s"), k.get("mean_predicted_s")
            if not measured or not predicted:
                continue
            rows.append({
                "suite": suite,
                "program": program,
                "kernel": k["name"],
                "launches": k["launches"],
                "measured_us": measured * 1e6,
                "predicted_us": predicted * 1e6,
                "error": abs(predicted - measured) / measured,
                "limited_by": k.get("limited_by") or "-",
                "device": stats.get("device") or "-",
            })
    return rows


def variant_groups(root, steady=None):
    """Per (stats file, kernel with variants): [(variant, launches, measured s, predicted s)],
    the runtime's winner and how many candidates the model left out. With `steady` (stats
    files by program, `stats_by_program`), each candidate measured by steady launches instead:
    STEADY_LAUNCHES or more in the run or, failing that, in `steady`; a kernel with a
    candidate that has none is left out."""
    groups = []
    for _, stats in stats_files(root):
        program = os.path.basename((stats.get("program") or ["?"])[0])
        machine = stats.get("machine") or {}
        # The first launch as the model charges it: observed in programs once enough were.
        first = machine.get("first_launch_observed_s") or machine.get("first_launch_s", 0.0)

        def first_of(k):
            # What the model charged the kernel's code loads; stats before run 39 charged
            # every load whole.
            return k.get("predicted_first_launch_s", first)

        steady_launch = machine.get("launch_observed_s") or machine.get("launch_s", 0.0)
        kernels = {k["name"]: k for k in stats.get("kernels", [])}
        for kernel, use in (stats.get("variants") or {}).items():
            timed_of = use.get("timed_s") or {}
            ran = [(v, r, kernels.get(v)) for v, r in use.get("runs", {}).items()]
            if steady is None:
                ran = [(v, r, k) for v, r, k in ran if k and k.get("mean_device_s") and k.get("last_prediction")]
            elif not all(k and k.get("last_prediction") for _, _, k in ran):
                continue
            # Like against like: the timed exploration launches (early in the program, on a
            # cold device) when every candidate has them, else every candidate's mean
            # launch less its share of a first launch. A candidate the model left out has
            # no timed launch, and its one warm-up launch is no match for the winner's
            # early samples (run 28b: BT's plain x_solve_l1555 timed at 32 us, steady at 9).
            all_timed = all(timed_of.get(v) for v, _, _ in ran)
            candidates = []
            for variant, runs, k in ran:
                timed = sorted(timed_of.get(variant) or [])
                if steady is not None:
                    launched = [k] + [o for f in steady.get(program, []) for o in f.get("kernels", []) if o["name"] == variant]
                    launched = [o for o in launched if o["launches"] >= STEADY_LAUNCHES and o.get("mean_device_s")]
                    if not launched:
                        break
                    measured = launched[0]["mean_device_s"] - first_of(launched[0]) / launched[0]["launches"]
                elif all_timed:
                    measured = timed[(len(timed) - 1) // 2]  # the lower middle, as the runtime takes it
                else:
                    measured = max(k["mean_device_s"] - first_of(k) / max(k["launches"], 1), 1e-7)
                # The steady prediction, as the model chooses by: a candidate's last
                # launch may be its first, or timed on its own, which the others' was not.
                last = k["last_prediction"]
                predicted = last["seconds"] - last.get("launch_s", 0.0) + steady_launch
                candidates.append((variant, runs, measured, predicted))
            else:
                if len(candidates) >= 2:
                    winner = (use.get("decisions") or [{}])[-1].get("winner")
                    groups.append((candidates, winner, len(use.get("left_out_by_model") or [])))
    return groups


# The runtime's `variants::PLAIN_PREFERENCE` and `MODEL_DECIDES`.
PLAIN_PREFERENCE = 0.10
MODEL_DECIDES = 0.30


def model_choice(candidates):
    """The model's choice among (variant, launches, measured, predicted), as the runtime's
    `variants::model_choice` makes it: the fastest prediction, or the plain variant (whose name
    the others extend) where none is predicted PLAIN_PREFERENCE faster; and whether the choice
    is clear (predicted MODEL_DECIDES faster than every other), which the runtime takes untimed."""
    plain = min(candidates, key=lambda c: len(c[0]))
    fastest = min(candidates, key=lambda c: c[3])
    choice = fastest if fastest[3] <= plain[3] * (1 - PLAIN_PREFERENCE) else plain
    clear = all(c is choice or choice[3] <= c[3] * (1 - MODEL_DECIDES) for c in candidates)
    return choice, clear


def losses(groups):
    """What choosing by the model alone, by the runtime and by the clear choices only loses
    over `groups` (`variant_groups`), in seconds weighted by launches, against the best; the
    best's total; the candidates left out and the clear groups."""
    lost_model = lost_runtime = lost_clear = total = 0.0
    left_out = clear_groups = 0
    for candidates, winner, dropped in groups:
        launches = sum(c[1] for c in candidates)
        best = min(candidates, key=lambda c: c[2])
        by_model, clear = model_choice(candidates)
        chosen = next((c for c in candidates if c[0] == winner), best)
        lost_model += launches * (by_model[2] - best[2])
        lost_runtime += launches * (chosen[2] - best[2])
        if clear:
            clear_groups += 1
            lost_clear += launches * (by_model[2] - best[2])
        total += launches * best[2]
        left_out += dropped
    return lost_model, lost_runtime, lost_clear, total, left_out, clear_groups


def variant_choice(root):
    groups = variant_groups(root)
    if not groups:
        return
    lost_model, lost_runtime, lost_clear, total, left_out, clear_groups = losses(groups)
    print("\nvariant choice (kernels with several variants that ran, weighted by launches):\n")
    print("| kernels | model alone loses | runtime (measured) loses | candidates left out by the model | clear to the model | clear choices lose |")
    print("|---:|---:|---:|---:|---:|---:|")
    print(f"| {len(groups)} | {100 * lost_model / total:.1f}% | {100 * lost_runtime / total:.1f}% | {left_out} | {clear_groups} | {100 * lost_clear / total:.1f}% |")


STEADY_LAUNCHES = 20


def stats_by_program(root):
    """Every JSON stats file below `root`, by its first source file's name."""
    found = {}
    for _, stats in stats_files(root):
        program = os.path.basename((stats.get("program") or ["?"])[0])
        found.setdefault(program, []).append(stats)
    return found


def steady_choice(root, steady_dirs):
    steady = {}
    for d in steady_dirs:
        for program, files in stats_by_program(d).items():
            steady.setdefault(program, []).extend(files)
    groups = variant_groups(root, steady)
    print("\nvariant choice against steady launches (every candidate 20 launches or more):\n")
    print("| kernels | model alone loses | runtime (measured) loses |")
    print("|---:|---:|---:|")
    if groups:
        lost_model, lost_runtime, _, total, _, _ = losses(groups)
        print(f"| {len(groups)} | {100 * lost_model / total:.1f}% | {100 * lost_runtime / total:.1f}% |")
    else:
        print("| 0 | - | - |")


def svg(rows, path):
    colours = {"examples": "#1f77b4", "fusion": "#ff7f0e", "polybench": "#2ca02c", "npb": "#d62728"}
    xs = [r["measured_us"] for r in rows] + [r["predicted_us"] for r in rows]
    lo = 10 ** math.floor(math.log10(max(min(xs), 1e-3)))
    hi = 10 ** math.ceil(math.log10(max(xs)))
    size, pad = 520, 60

    def pos(v):
        return pad + (math.log10(v) - math.log10(lo)) / (math.log10(hi) - math.log10(lo)) * (size - 2 * pad)

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{size}" height="{size}" font-family="sans-serif" font-size="11">',
           f'<rect width="{size}" height="{size}" fill="white"/>']
    decade = lo
    while decade <= hi:
        p = pos(decade)
        out.append(f'<line x1="{p:.1f}" y1="{pad}" x2="{p:.1f}" y2="{size - pad}" stroke="#ddd"/>')
        out.append(f'<line x1="{pad}" y1="{size - p:.1f}" x2="{size - pad}" y2="{size - p:.1f}" stroke="#ddd"/>')
        out.append(f'<text x="{p:.1f}" y="{size - pad + 14}" text-anchor="middle">{decade:g}</text>')
        out.append(f'<text x="{pad - 4}" y="{size - p + 4:.1f}" text-anchor="end">{decade:g}</text>')
        decade *= 10
    out.append(f'<line x1="{pad}" y1="{size - pad}" x2="{size - pad}" y2="{pad}" stroke="#888" stroke-dasharray="4"/>')
    for r in rows:
        x, y = pos(r["measured_us"]), size - pos(r["predicted_us"])
        title = f'{r["program"]} {r["kernel"]}: measured {r["measured_us"]:.1f} us, predicted {r["predicted_us"]:.1f} us'
        out.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3" fill="{colours.get(r["suite"], "#555")}" fill-opacity="0.7"><title>{title}</title></circle>')
    out.append(f'<text x="{size / 2}" y="{size - 16}" text-anchor="middle">measured device time per launch (us)</text>')
    out.append(f'<text x="16" y="{size / 2}" text-anchor="middle" transform="rotate(-90 16 {size / 2})">predicted (us)</text>')
    for i, (suite, colour) in enumerate(colours.items()):
        out.append(f'<circle cx="{pad + 10}" cy="{pad + 10 + 14 * i}" r="4" fill="{colour}"/>'
                   f'<text x="{pad + 18}" y="{pad + 14 + 14 * i}">{suite}</text>')
    out.append("</svg>")
    with open(path, "w") as fh:
        fh.write("\n".join(out) + "\n")


def main():
    args, steady_dirs = sys.argv[1:], []
    while "--steady" in args:
        at = args.index("--steady")
        if at + 1 >= len(args):
            print(__doc__, file=sys.stderr)
            sys.exit(2)
        steady_dirs.append(args[at + 1])
        del args[at:at + 2]
    if len(args) != 1:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    root = args[0]
    rows = collect(root)
    if not rows:
        print("no kernel with both a measured and a predicted time")
        sys.exit(1)
    device = sorted({r["device"] for r in rows})
    print(f"device: {', '.join(device)}\n")
    print("| suite | kernels | median error | 90th percentile | within 15% | within 35% |")
    print("|---|---:|---:|---:|---:|---:|")
    for suite in sorted({r["suite"] for r in rows}) + ["all"]:
        errs = [r["error"] for r in rows if suite == "all" or r["suite"] == suite]
        within = lambda t: sum(e <= t for e in errs) / len(errs) * 100
        print(f"| {suite} | {len(errs)} | {percentile(errs, 0.5) * 100:.1f}% | {percentile(errs, 0.9) * 100:.1f}% "
              f"| {within(0.15):.0f}% | {within(0.35):.0f}% |")
    print("\nworst kernels:\n")
    print("| suite | program | kernel | launches | measured (us) | predicted (us) | error | limited by |")
    print("|---|---|---|---:|---:|---:|---:|---|")
    for r in sorted(rows, key=lambda r: -r["error"])[:20]:
        print(f'| {r["suite"]} | {r["program"]} | {r["kernel"]} | {r["launches"]} | {r["measured_us"]:.1f} '
              f'| {r["predicted_us"]:.1f} | {r["error"] * 100:.0f}% | {r["limited_by"]} |')
    with open(os.path.join(root, "kernels.csv"), "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)
    svg(rows, os.path.join(root, "model.svg"))
    variant_choice(root)
    if steady_dirs:
        steady_choice(root, steady_dirs)


if __name__ == "__main__":
    main()
