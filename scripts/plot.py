#!/usr/bin/env python3
"""Plots a suite results folder (PNG files next to the results), from the tools' JSON only.

- lat_mem_rd: latency against array size (log2 axis), one line per stride and per cluster,
  with the cache sizes sysfs reports marked;
- bw_mem: bandwidth per operation, one bar group per parallelism, stacked by cluster;
- dto: density, violin and ECDF plots of distributions.csv (scripts/plot_distributions.py).

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


def param(m, *names):
    p = m.get("params") or {}
    for n in names:
        if n in p:
            return p[n]
    return None


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
        size = param(m, "size_bytes", "range_bytes", "len_bytes")
        stride = param(m, "stride_bytes", "stride")
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


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    out = pathlib.Path(sys.argv[1])
    made = []
    bw = []
    for path in sorted(out.glob("*.json")):
        data = load(path)
        if not data or "measurements" not in data:
            continue
        if data.get("tool") == "lat_mem_rd":
            png = latency_plot(path, data, out)
            if png:
                made.append(png)
        elif data.get("tool") == "bw_mem":
            bw.append((path, data))
    png = bandwidth_plot(bw, out)
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
    for m in made:
        print(f"plot: {m}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
