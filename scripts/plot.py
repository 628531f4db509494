#!/usr/bin/env python3
"""Plots a suite results folder (PNG files in its plots/ folder), from the tools' JSON only.

- lat_mem_rd: latency against array size (log2 axis), one line per stride and per cluster,
  with the cache sizes sysfs reports marked;
- bw_mem: bandwidth per operation, one bar group per parallelism, stacked by cluster;
- lat_mem_rd --c2c: a heat map of the core-to-core matrix;
- lat_mem_rd --loaded: latency against load bandwidth, a point per injection delay;
- dto: density, violin and ECDF plots of distributions.csv (scripts/plot_distributions.py);
- after suite.sh --baseline: both sides' samples of every regressed figure (compare.json).

Usage: scripts/plot.py RESULTS_DIR
"""
import json
import pathlib
import subprocess
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402



def load(path):
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def sizing(m, key):
    """A measurement's size, stride or layout as the tool declared it (its `sizing`, the
    framework's one definition of what sizes a figure), never a guess at the tool's own
    parameter names; None when the tool declared none."""
    return (m.get("sizing") or {}).get(key)


def human(nbytes):
    for shift, suffix in ((30, "G"), (20, "M"), (10, "K")):
        if nbytes >= 1 << shift:
            v = nbytes / (1 << shift)
            return f"{v:g}{suffix}"
    return f"{nbytes:g}"


def latency_plot(path, data, out):
    """One PNG per lat_mem_rd report."""
    series = {}
    for m in data.get("measurements", []):
        size = sizing(m, "size_bytes")
        stride = sizing(m, "stride_bytes")
        if size is None:
            continue
        clusters = m["aggregate"].get("per_cluster", [])
        if len(clusters) > 1:
            for c in clusters:
                key = f"stride {stride} cluster {c['cluster']}"
                series.setdefault(key, []).append((size, c["mean"]))
        else:
            key = f"stride {stride}"
            series.setdefault(key, []).append((size, m["aggregate"]["cluster"]))
    if not series:
        return None
    fig, ax = plt.subplots(figsize=(9, 5))
    for key, pts in series.items():
        pts.sort()
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker=".", label=key)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("array size (bytes)")
    ax.set_ylabel("latency per load (ns)")
    seen = set()
    topo = data.get("topology", {})
    caches = topo.get("caches", [])
    for c in caches:
        if c.get("type") == "Instruction":
            continue
        key = (c["level"], c["size_bytes"])
        if key in seen:
            continue
        seen.add(key)
        ax.axvline(c["size_bytes"], color="grey", linestyle="--", linewidth=0.8)
        ax.text(c["size_bytes"], ax.get_ylim()[1], f" L{c['level']} {human(c['size_bytes'])}",
                rotation=90, va="top", fontsize=8, color="grey")
    ax.set_title(f"lat_mem_rd on {data.get('host', {}).get('cpu_model', '?')}")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    png = out / f"{path.stem}.png"
    fig.tight_layout()
    fig.savefig(png, dpi=110)
    plt.close(fig)
    return png


def bandwidth_plot(reports, out):
    """One PNG with every bw_mem report: op on the x axis, one bar per parallelism."""
    rows = []
    for path, data in reports:
        for m in data.get("measurements", []):
            p = len(m.get("children", [])) or 1
            clusters = m["aggregate"].get("per_cluster", [])
            rows.append((m["name"], p, [c["total"] for c in clusters] or [m["aggregate"]["cluster"]]))
    if not rows:
        return None
    ops = sorted({r[0] for r in rows}, key=lambda o: [r[0] for r in rows].index(o))
    pars = sorted({r[1] for r in rows})
    width = 0.8 / len(pars)
    fig, ax = plt.subplots(figsize=(max(6, len(ops) * 1.2), 5))
    for j, p in enumerate(pars):
        for i, op in enumerate(ops):
            match = [r for r in rows if r[0] == op and r[1] == p]
            if not match:
                continue
            bottom = 0.0
            for k, v in enumerate(match[-1][2]):
                ax.bar(i + j * width, v, width, bottom=bottom,
                       color=plt.cm.tab10(j * 3 + k), edgecolor="black", linewidth=0.3,
                       label=f"P={p}" + (f" cluster {k}" if len(match[-1][2]) > 1 else ""))
                bottom += v
    ax.set_xticks([i + width * (len(pars) - 1) / 2 for i in range(len(ops))])
    ax.set_xticklabels(ops)
    ax.set_ylabel("MB/s (MB = 10^6 bytes)")
    ax.set_title("bw_mem bandwidth per operation (stacked by cluster)")
    handles, labels = ax.get_legend_handles_labels()
    uniq = dict(zip(labels, handles))
    ax.legend(uniq.values(), uniq.keys(), fontsize=8)
    ax.grid(True, axis="y", alpha=0.3)
    png = out / "bw_mem.png"
    fig.tight_layout()
    fig.savefig(png, dpi=110)
    plt.close(fig)
    return png


def regression_plots(out, dest):
    """One PNG per regressed figure of compare.json (suite.sh --baseline or --ab): both sides'
    samples as strips with their central values, so a reader sees the shift and the spread;
    for a paired comparison (--ab) also each pair's difference over time."""
    cmp = load(out / "compare.json")
    if not cmp:
        return []
    made = []
    for row in cmp.get("rows", []):
        if row.get("verdict") != "FAIL":
            continue
        paired = row.get("paired") or None
        if paired:
            fig, (ax, dx) = plt.subplots(2, 1, figsize=(7, 5.2))
        else:
            fig, ax = plt.subplots(figsize=(7, 2.8))
        sides = [("base", row.get("base")), ("current", row.get("current"))]
        for y, (label, side) in enumerate(sides):
            if not side:
                continue
            xs = side.get("samples") or [side.get("value")]
            ax.scatter(xs, [y] * len(xs), s=14, alpha=0.6, label=f"{label} (n={len(xs)})")
            ax.axvline(side.get("trimmed_mean"), ymin=0.05 + 0.5 * y, ymax=0.45 + 0.5 * y,
                       color="black", linewidth=1)
        ax.set_yticks([0, 1], ["base", "current"])
        ax.set_ylim(-0.6, 1.6)
        arrow = "higher is better" if row.get("better") == "higher" else "lower is better"
        ax.set_xlabel(f"{row.get('unit', '')} ({arrow})")
        change = row.get("change_pct")
        if paired:
            j = paired.get("judgement", {})
            how = (f"[{j.get('low_pct', float('nan')):+.1f}, "
                   f"{j.get('high_pct', float('nan')):+.1f}] %, {len(paired.get('differences', []))} pairs")
        else:
            p = row.get("ks_p")
            how = "p -" if p is None else f"p {p:.3f}"
        ax.set_title(f"{row['entry']} {row['figure']}: {change:+.1f} %, {how}, FAIL", fontsize=9)
        ax.legend(fontsize=7, loc="upper right")
        if paired:
            import math
            ds = [(math.exp(d) - 1) * 100 for d in paired["differences"]]
            dx.plot(range(1, len(ds) + 1), ds, marker=".", linewidth=0.6, markersize=3)
            dx.axhline(0, color="black", linewidth=0.8)
            dx.axhline(change, color="red", linewidth=0.8, label=f"estimate {change:+.1f} %")
            dx.set_xlabel("pair (time order)")
            dx.set_ylabel("current against base, % (positive: worse)")
            dx.legend(fontsize=7, loc="upper right")
        slug = "".join(c if c.isalnum() else "_" for c in f"{row['entry']}-{row['figure']}")
        png = dest / f"compare-{slug}.png"
        fig.tight_layout()
        fig.savefig(png, dpi=110)
        plt.close(fig)
        made.append(png)
    return made


def c2c_plot(path, data, out):
    """A heat map of lat_mem_rd --c2c's matrix (ns per one-way transfer)."""
    m = (data.get("extra") or {})
    cpus, ns = m.get("cpus"), m.get("ns")
    if not cpus or not ns:
        return None
    grid = [[float("nan") if v is None else v for v in row] for row in ns]
    fig, ax = plt.subplots(figsize=(1.2 + 0.5 * len(cpus), 1 + 0.45 * len(cpus)))
    im = ax.imshow(grid, cmap="viridis")
    ax.set_xticks(range(len(cpus)), [str(c) for c in cpus])
    ax.set_yticks(range(len(cpus)), [str(c) for c in cpus])
    ax.set_xlabel("to CPU (ponger)")
    ax.set_ylabel("from CPU (pinger)")
    if len(cpus) <= 16:
        for i, row in enumerate(ns):
            for j, v in enumerate(row):
                if v is not None:
                    ax.text(j, i, f"{v:.0f}", ha="center", va="center", color="white", fontsize=7)
    fig.colorbar(im, ax=ax, label="ns per one-way transfer")
    ax.set_title("core-to-core latency", fontsize=9)
    png = out / (path.stem + ".png")
    fig.tight_layout()
    fig.savefig(png, dpi=110)
    plt.close(fig)
    return png


def loaded_plot(path, data, out):
    """lat_mem_rd --loaded: latency against load bandwidth, one point per delay (MLC's curve)."""
    t = data.get("extra") or {}
    rows = [r for r in t.get("rows", []) if r.get("delay") is not None]
    idle = [r for r in t.get("rows", []) if r.get("delay") is None]
    if not rows:
        return None
    rows.sort(key=lambda r: r["load_mb_s"])
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.plot([r["load_mb_s"] for r in rows], [r["latency_ns"] for r in rows], "o-",
            label=f"load {t.get('load')} on CPUs {','.join(map(str, t.get('load_cpus', [])))}")
    for r in rows:
        ax.annotate(str(r["delay"]), (r["load_mb_s"], r["latency_ns"]), fontsize=7,
                    textcoords="offset points", xytext=(3, 3))
    if idle:
        ax.axhline(idle[0]["latency_ns"], color="grey", linestyle="--", linewidth=1,
                   label="unloaded")
    ax.set_xlabel("load bandwidth, MB/s (labels: injection delay)")
    ax.set_ylabel("latency, ns")
    ax.set_ylim(bottom=0)
    ax.set_title(f"loaded latency, random chain over {t.get('size_bytes', 0) >> 20} MiB "
                 f"on CPU {t.get('chase_cpu')}", fontsize=9)
    ax.legend(fontsize=7)
    png = out / (path.stem + ".png")
    fig.tight_layout()
    fig.savefig(png, dpi=110)
    plt.close(fig)
    return png


def failed_entries(out):
    """The labels status.tsv calls failed: an entry that could not measure (a parallel run
    whose children ran apart, say) has no figure to plot, whatever its JSON holds."""
    try:
        lines = (out / "status.tsv").read_text().splitlines()
    except OSError:
        return set()
    failed = set()
    for line in lines[1:]:
        cols = line.split("\t")
        if len(cols) >= 5 and cols[4] == "failed":
            failed.add(cols[0])
    return failed


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    out = pathlib.Path(sys.argv[1])
    # Every plot of the folder in plots/, which benchmp suite records as its own (so --force
    # removes it with the rest); dto's distribution plots stay beside distributions.csv.
    plots = out / "plots"
    plots.mkdir(exist_ok=True)
    made = []
    bw = []
    failed = failed_entries(out)
    for path in sorted(out.glob("*.json")):
        if path.stem in failed:
            print(f"plot.py: {path.stem} failed: left out of the plots")
            continue
        data = load(path)
        if not data or "measurements" not in data:
            continue
        if data.get("tool") == "lat_mem_rd" and "handshake" in (data.get("extra") or {}):
            png = c2c_plot(path, data, plots)
            if png:
                made.append(png)
        elif data.get("tool") == "lat_mem_rd" and "rows" in (data.get("extra") or {}):
            png = loaded_plot(path, data, plots)
            if png:
                made.append(png)
        elif data.get("tool") == "lat_mem_rd":
            png = latency_plot(path, data, plots)
            if png:
                made.append(png)
        elif data.get("tool") == "bw_mem":
            bw.append((path, data))
    png = bandwidth_plot(bw, plots)
    if png:
        made.append(png)
    plot_dist = pathlib.Path(__file__).with_name("plot_distributions.py")
    for dist in sorted(out.glob("*/distributions.csv")):
        if plot_dist.exists():
            for op in ("memcpy", "memset", "memcmp"):
                for page in ("4k", "2m"):
                    subprocess.run([sys.executable, str(plot_dist), str(dist.parent), page, op],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
            made.extend(sorted(dist.parent.glob("*.png")))
    made.extend(regression_plots(out, plots))
    for m in made:
        print(f"plot: {m}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
