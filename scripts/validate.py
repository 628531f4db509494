#!/usr/bin/env python3
"""Validation of bw_mem and lat_mem_rd against independent tools, in ABBA order.

For each comparison the pair runs A B B A, repeated --rounds times, every run pinned to the same
CPU and holding the shared benchmark lock, so both sides see the same machine state. Our figures
come from the tools' JSON; the peers' from their own output. The result is a markdown table of
medians, the ratio ours/peer and the difference, which docs/validation.md explains row by row.

Peers: likwid-bench, mbw, sysbench (Debian packages likwid, mbw, sysbench) and, when --lmbench
names a folder holding lmbench's own bw_mem and lat_mem_rd built from its sources, the
reference itself.

Usage: scripts/validate.py [--rounds R] [--size MIB] [--lat-len MIB] [--cpu N]
                           [--lmbench DIR] [--bin DIR] [--only bw|lat]
"""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

LOCK = "/tmp/socbench-cpu.lock"
MIB = 1 << 20


def run(cmd, env=None):
    """Runs a command under the shared benchmark lock; returns (stdout, stderr)."""
    full = ["flock", LOCK] + cmd
    e = dict(os.environ)
    if env:
        e.update(env)
    p = subprocess.run(full, capture_output=True, text=True, env=e, check=False)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {p.returncode}: {p.stderr.strip()[:300]}")
    return p.stdout, p.stderr


class Ours:
    """bw_mem / lat_mem_rd of this workspace, figures read from --json."""

    def __init__(self, bindir, cpu):
        self.bindir = bindir
        self.cpu = cpu

    def bw(self, op, size_mib, reps=5):
        with tempfile.NamedTemporaryFile(suffix=".json") as f:
            run([f"{self.bindir}/bw_mem", "--cpus", str(self.cpu), "-N", str(reps),
                 f"{size_mib}m", op, f"--json={f.name}"])
            r = json.load(open(f.name))
        return r["measurements"][0]["aggregate"]["cluster"]

    def lat(self, length_mib, stride, random, reps):
        args = [f"{self.bindir}/lat_mem_rd", "--cpus", str(self.cpu), "-N", str(reps)]
        if random:
            args.append("-t")
        with tempfile.NamedTemporaryFile(suffix=".json") as f:
            run(args + [str(length_mib), str(stride), f"--json={f.name}"])
            r = json.load(open(f.name))
        return {m["params"]["size_bytes"]: m["aggregate"]["median"] for m in r["measurements"]}


def likwid(test, size_bytes, cpu):
    """likwid-bench MByte/s (10^6) for one thread; the working set is split over the streams."""
    out, _ = run(["likwid-bench", "-t", test, "-w", f"N:{size_bytes // 1000}kB:1",
                  "-s", "1"])
    m = re.search(r"MByte/s:\s+([0-9.]+)", out)
    if not m:
        raise RuntimeError(f"likwid-bench {test}: no MByte/s line")
    return float(m.group(1))


def mbw(test, size_mib, cpu):
    """mbw average copy rate, converted from MiB/s to MB/s."""
    out, _ = run(["taskset", "-c", str(cpu), "mbw", "-q", "-n", "5", "-t", str(test), str(size_mib)])
    m = re.search(r"AVG\s+Method:.*Copy:\s+([0-9.]+)\s+MiB/s", out)
    if not m:
        raise RuntimeError("mbw: no AVG line")
    return float(m.group(1)) * MIB / 1e6


def sysbench(oper, size_mib, cpu):
    """sysbench memory sequential rate over one block of the given size, MB/s."""
    out, _ = run(["taskset", "-c", str(cpu), "sysbench", "memory", "--threads=1",
                  f"--memory-block-size={size_mib}M", f"--memory-total-size={size_mib * 40}M",
                  f"--memory-oper={oper}", "--memory-access-mode=seq", "run"])
    m = re.search(r"\(([0-9.]+) MiB/sec\)", out)
    if not m:
        raise RuntimeError("sysbench: no MiB/sec line")
    return float(m.group(1)) * MIB / 1e6


def lmbench_bw(lmdir, op, size_mib, cpu, reps, enough):
    _, err = run(["taskset", "-c", str(cpu), f"{lmdir}/bw_mem", "-N", str(reps), f"{size_mib}m", op],
                 env={"ENOUGH": str(enough), "TIMING_O": "0", "LOOP_O": "0"})
    return float(err.split()[1])


def lmbench_lat(lmdir, length_mib, stride, random, reps, enough, cpu):
    args = ["taskset", "-c", str(cpu), f"{lmdir}/lat_mem_rd", "-N", str(reps)]
    if random:
        args.append("-t")
    _, err = run(args + [str(length_mib), str(stride)],
                 env={"ENOUGH": str(enough), "TIMING_O": "0", "LOOP_O": "0"})
    points = {}
    for line in err.splitlines():
        parts = line.split()
        if len(parts) == 2 and not line.startswith('"'):
            points[grid_size(float(parts[0]) * MIB)] = float(parts[1])
    return points


def grid_size(nbytes):
    """The size of lmbench's sweep grid nearest to `nbytes` (its output keeps 5 decimals of MiB)."""
    k, best = 512, 512
    while k <= 1 << 40:
        if abs(k - nbytes) < abs(best - nbytes):
            best = k
        if k < 1024:
            k *= 2
        elif k < 4096:
            k += 1024
        else:
            step = 32768
            while step <= k:
                step *= 2
            k += step // 16
    return best


def abba(a, b, rounds):
    """Runs a() and b() in A B B A order, `rounds` times."""
    xs, ys = [], []
    for _ in range(rounds):
        xs.append(a())
        ys.append(b())
        ys.append(b())
        xs.append(a())
    return xs, ys


def cached_enough():
    path = os.path.expanduser("~/.cache/socbench/calibration.json")
    try:
        return json.load(open(path))["enough_us"]
    except (OSError, ValueError, KeyError):
        return 5000


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--size", type=int, default=256, help="bandwidth buffer, MiB")
    ap.add_argument("--lat-len", type=int, default=256, help="latency sweep length, MiB")
    ap.add_argument("--cpu", type=int, default=0)
    ap.add_argument("--lmbench", help="folder with lmbench's bw_mem and lat_mem_rd binaries")
    ap.add_argument("--bin", default=os.path.join(os.environ.get("CARGO_TARGET_DIR", "target"), "release"))
    ap.add_argument("--only", choices=["bw", "lat"])
    args = ap.parse_args()
    ours = Ours(args.bin, args.cpu)
    size = args.size
    nbytes = size * MIB
    enough = cached_enough()
    have = {t: shutil.which(t) is not None for t in ("likwid-bench", "mbw", "sysbench")}

    rows = []
    if args.only != "lat":
        cmp = [
            # (ours op, peer label, peer function, factor applied to the peer, note key)
            ("rd", "likwid-bench load", lambda: likwid("load", nbytes, args.cpu), 1.0, "rd-load"),
            ("rdvec", "likwid-bench load_avx512", lambda: likwid("load_avx512", nbytes, args.cpu), 1.0, "rdvec"),
            ("frd", "sysbench memory read", lambda: sysbench("read", size, args.cpu), 1.0, "frd"),
            ("wr", "likwid-bench store", lambda: likwid("store", nbytes, args.cpu), 1.0, "wr"),
            ("fwr", "sysbench memory write", lambda: sysbench("write", size, args.cpu), 1.0, "fwr"),
            ("wrnt", "likwid-bench store_mem_avx512", lambda: likwid("store_mem_avx512", nbytes, args.cpu), 1.0, "wrnt"),
            ("bcopy", "mbw MEMCPY", lambda: mbw(0, size, args.cpu), 1.0, "bcopy"),
            ("cp", "mbw DUMB", lambda: mbw(1, size, args.cpu), 1.0, "cp"),
            ("fcp", "likwid-bench copy / 2", lambda: likwid("copy", 2 * nbytes, args.cpu), 0.5, "fcp"),
            ("cpnt", "likwid-bench copy_mem_avx512 / 2", lambda: likwid("copy_mem_avx512", 2 * nbytes, args.cpu), 0.5, "cpnt"),
        ]
        if args.lmbench:
            for op in ("rd", "wr", "bcopy", "bzero"):
                cmp.append((op, f"lmbench bw_mem {op}",
                            (lambda o: lambda: lmbench_bw(args.lmbench, o, size, args.cpu, 5, enough))(op),
                            1.0, f"lmbench-{op}"))
        for op, label, peer, factor, key in cmp:
            tool = label.split()[0]
            if tool != "lmbench" and not have.get(tool, False):
                print(f"skipped {label}: {tool} not installed", file=sys.stderr)
                continue
            try:
                xs, ys = abba(lambda: ours.bw(op, size), lambda: peer() * factor, args.rounds)
            except RuntimeError as e:
                print(f"skipped {op} vs {label}: {e}", file=sys.stderr)
                continue
            rows.append((f"bw_mem {op} {size}m", label, statistics.median(xs), statistics.median(ys), "MB/s", key, xs, ys))
            print(f"{op:>6} vs {label}: {statistics.median(xs):.0f} / {statistics.median(ys):.0f}", file=sys.stderr)

    if args.only != "bw" and args.lmbench:
        for random, stride, length in ((True, 64, args.lat_len), (False, 64, min(args.lat_len, 64))):
            xs, ys = abba(lambda: ours.lat(length, stride, random, 3),
                          lambda: lmbench_lat(args.lmbench, length, stride, random, 3, enough, args.cpu),
                          args.rounds)
            mode = "-t " if random else ""
            for probe in (32 << 10, 512 << 10, 16 << 20, length * MIB):
                a = [c.get(probe) for c in xs]
                b = [c.get(probe) for c in ys]
                if None in a or None in b:
                    continue
                rows.append((f"lat_mem_rd {mode}{length} {stride} @ {probe // 1024}K", "lmbench lat_mem_rd",
                             statistics.median(a), statistics.median(b), "ns", "lat", a, b))
            # Whole-curve agreement: median over sizes of |ours/lmbench - 1|.
            common = sorted(set(xs[0]) & set(ys[0]))
            devs = [abs(statistics.median([c[s] for c in xs]) / statistics.median([c[s] for c in ys]) - 1)
                    for s in common if all(s in c for c in xs + ys)]
            if devs:
                print(f"lat_mem_rd {mode}{length} {stride}: {len(devs)} sizes, median |ours/lmbench - 1| = "
                      f"{statistics.median(devs) * 100:.1f} %, worst {max(devs) * 100:.1f} %", file=sys.stderr)
                rows.append((f"lat_mem_rd {mode}{length} {stride}, all {len(devs)} sizes", "lmbench lat_mem_rd",
                             None, None, "", "lat-curve", [statistics.median(devs) * 100], [max(devs) * 100]))

    print(f"| measurement | peer | ours | peer | unit | ours/peer | runs (ABBA x {args.rounds}) |")
    print("| --- | --- | ---: | ---: | --- | ---: | --- |")
    def num(x):
        return f"{x:,.0f}" if abs(x) >= 100 else f"{x:.3g}"

    for what, peer, a, b, unit, key, xs, ys in rows:
        if a is None:
            print(f"| {what} | {peer} | median deviation {xs[0]:.1f} % | worst {ys[0]:.1f} % | | | |")
            continue
        ratio = a / b if b else float("nan")
        spread = f"ours {num(min(xs))}..{num(max(xs))}, peer {num(min(ys))}..{num(max(ys))}"
        print(f"| {what} | {peer} | {num(a)} | {num(b)} | {unit} | {ratio:.3f} | {spread} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
