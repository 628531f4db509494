#!/usr/bin/env python3
"""Plots the latency distributions of a `dto ab` / `dto speedup` run.

Usage: plot_distributions.py [results_dir] [pagesize] [optype]
  results_dir  folder holding distributions.csv (default: perf_results, dto's RESULTS_DIR default)
  pagesize     4k or 2m (default: 4k)
  optype       memcpy, memset or memcmp (default: memcpy)

Writes distributions_{pagesize}_{optype}_{density,violin,ecdf}.png into results_dir: one panel
per benchmark, baseline and current of every configuration (and CPU, when dto measured several)
side by side. The x range is the
1st-99th percentile of the panel's samples so a few slow outliers do not flatten the plot.
Requires pandas, numpy and matplotlib; with scipy the density is a Gaussian KDE, without it a
histogram. Exit status: 0 written, 1 no matching samples, 2 bad arguments.
"""
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

try:
    from scipy.stats import gaussian_kde
except ImportError:  # density falls back to a histogram
    gaussian_kde = None

USAGE = "usage: plot_distributions.py [results_dir] [4k|2m] [memcpy|memset|memcmp]"


def fail(msg, code=2):
    print(f"plot_distributions: {msg}", file=sys.stderr)
    sys.exit(code)


def main(argv):
    if len(argv) > 3 or any(a in ("-h", "--help") for a in argv):
        if any(a in ("-h", "--help") for a in argv):
            print(__doc__)
            return 0
        fail(USAGE)
    results = argv[0] if len(argv) > 0 else "perf_results"
    pagesize = argv[1] if len(argv) > 1 else "4k"
    optype = argv[2] if len(argv) > 2 else "memcpy"
    if pagesize not in ("4k", "2m"):
        fail(f"pagesize must be 4k or 2m, not '{pagesize}'")
    if optype not in ("memcpy", "memset", "memcmp"):
        fail(f"optype must be memcpy, memset or memcmp, not '{optype}'")
    path = os.path.join(results, "distributions.csv")
    if not os.path.isfile(path):
        fail(f"{path} does not exist (run dto ab with RESULTS_DIR={results})")
    df = pd.read_csv(path)
    need = {"pagesize", "optype", "test", "config", "version", "ns"}
    if not need.issubset(df.columns):
        fail(f"{path} lacks columns {sorted(need - set(df.columns))}")
    df = df[(df["pagesize"] == pagesize) & (df["optype"] == optype)]
    if df.empty:
        fail(f"no {optype} samples with {pagesize} pages in {path}", 1)

    if "cpu" in df.columns and df["cpu"].nunique() > 1:
        # Several CPUs measured (dto --cpus): one series per configuration and CPU.
        df = df.assign(config=df["config"] + " cpu" + df["cpu"].astype(str))

    tests = list(dict.fromkeys(df["test"]))
    series = list(dict.fromkeys(zip(df["config"], df["version"])))
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    configs = list(dict.fromkeys(df["config"]))

    def style(config, version):
        colour = colours[configs.index(config) % len(colours)]
        return colour, ("-" if version == "baseline" else "--")

    def panels(title):
        fig, axes = plt.subplots(len(tests), 1, figsize=(9, 2.8 * len(tests)), squeeze=False)
        fig.suptitle(f"{title}: {optype}, {pagesize} pages")
        return fig, [a[0] for a in axes]

    def clip(x, lo, hi):
        return x[(x >= lo) & (x <= hi)]

    written = []

    fig, axes = panels("Latency density")
    for ax, test in zip(axes, tests):
        sub = df[df["test"] == test]
        lo, hi = np.percentile(sub["ns"], [1, 99])
        grid = np.linspace(lo, hi, 400)
        for config, version in series:
            x = clip(sub[(sub["config"] == config) & (sub["version"] == version)]["ns"].to_numpy(), lo, hi)
            if len(x) < 2:
                continue
            colour, line = style(config, version)
            label = f"{config} {version}"
            if gaussian_kde is not None and np.ptp(x) > 0:
                ax.plot(grid, gaussian_kde(x)(grid), line, color=colour, label=label)
            else:
                ax.hist(x, bins=60, density=True, histtype="step", linestyle=line, color=colour, label=label)
        ax.set_title(test, fontsize=10)
        ax.set_xlabel("ns")
        ax.set_ylabel("density")
        ax.legend(fontsize=7)
    written.append(save(fig, results, pagesize, optype, "density"))

    fig, axes = panels("Latency violins")
    for ax, test in zip(axes, tests):
        sub = df[df["test"] == test]
        lo, hi = np.percentile(sub["ns"], [1, 99])
        data, labels = [], []
        for config, version in series:
            x = clip(sub[(sub["config"] == config) & (sub["version"] == version)]["ns"].to_numpy(), lo, hi)
            if len(x) >= 2:
                data.append(x)
                labels.append(f"{config}\n{version}")
        if data:
            ax.violinplot(data, showmedians=True)
            ax.set_xticks(range(1, len(labels) + 1))
            ax.set_xticklabels(labels, fontsize=7)
        ax.set_title(test, fontsize=10)
        ax.set_ylabel("ns")
    written.append(save(fig, results, pagesize, optype, "violin"))

    fig, axes = panels("Empirical CDF")
    for ax, test in zip(axes, tests):
        sub = df[df["test"] == test]
        lo, hi = np.percentile(sub["ns"], [1, 99])
        for config, version in series:
            x = np.sort(sub[(sub["config"] == config) & (sub["version"] == version)]["ns"].to_numpy())
            if len(x) == 0:
                continue
            colour, line = style(config, version)
            ax.step(x, np.arange(1, len(x) + 1) / len(x), line, where="post", color=colour,
                    label=f"{config} {version}")
        ax.set_xlim(lo, hi)
        ax.set_title(test, fontsize=10)
        ax.set_xlabel("ns")
        ax.set_ylabel("fraction ≤ x")
        ax.legend(fontsize=7)
    written.append(save(fig, results, pagesize, optype, "ecdf"))

    for w in written:
        print(w)
    return 0


def save(fig, results, pagesize, optype, kind):
    fig.tight_layout()
    out = os.path.join(results, f"distributions_{pagesize}_{optype}_{kind}.png")
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
