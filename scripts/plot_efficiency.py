#!/usr/bin/env python3
"""Plots a `benchmp efficiency` results folder: performance against power above the idle
baseline, one line per cluster, each point a frequency (the lowest and highest labelled in
MHz); a panel per command and placement (one CPU of the cluster, all of its CPUs), every
cluster in each panel. Reads only efficiency.json's `curves` (the points benchmp computed),
writes efficiency.png beside it (a file `benchmp efficiency` records as its own, so --force
removes it with the rest).

Usage: scripts/plot_efficiency.py RESULTS_DIR

Exit status: 0 plotted (or nothing to plot: no step had a power record, said on stderr), 2 no
efficiency.json in RESULTS_DIR or one that cannot be read.
"""
import json
import pathlib
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def panels(curves):
    """The curves by (command, placement), in the order they come."""
    out = {}
    for c in curves:
        out.setdefault((c["command"], c["placement"]), []).append(c)
    return out


def main():
    if len(sys.argv) != 2:
        print("usage: scripts/plot_efficiency.py RESULTS_DIR", file=sys.stderr)
        return 2
    out = pathlib.Path(sys.argv[1])
    try:
        data = json.loads((out / "efficiency.json").read_text())
        curves = data["curves"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        print(f"plot_efficiency.py: {out}/efficiency.json cannot be read: {e}", file=sys.stderr)
        return 2
    if not curves:
        print("plot_efficiency.py: no step has a power record: nothing to plot", file=sys.stderr)
        return 0
    groups = panels(curves)
    cols = min(2, len(groups))
    rows = (len(groups) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(6.5 * cols, 4.5 * rows), squeeze=False)
    for ax, ((command, placement), cs) in zip(axes.flat, groups.items()):
        for c in cs:
            pts = c["points"]
            xs = [p["power_w"] for p in pts]
            ys = [p["performance"] for p in pts]
            cpus = ",".join(str(x) for x in c["cpus"])
            ax.plot(xs, ys, marker="o", label=f"cluster {c['cluster']} (CPUs {cpus})")
            for p in (pts[0], pts[-1]) if len(pts) > 1 else pts:
                ax.annotate(f"{p['mhz']:g} MHz", (p["power_w"], p["performance"]),
                            textcoords="offset points", xytext=(4, 4), fontsize=7)
        where = "one CPU" if placement == "one" else "all CPUs of the cluster"
        ax.set_title(f"{command} on {where}")
        ax.set_xlabel("power above the idle baseline (W)")
        ax.set_ylabel(cs[0]["unit"])
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    for ax in list(axes.flat)[len(groups):]:
        ax.axis("off")
    fig.suptitle("efficiency per cluster: performance against power, one point per frequency")
    fig.tight_layout()
    png = out / "efficiency.png"
    fig.savefig(png, dpi=110)
    print(f"plot: {png}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
