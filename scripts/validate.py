#!/usr/bin/env python3
"""Validation of bw_mem and lat_mem_rd against independent tools and lmbench, in ABBA order.

For each comparison the pair runs A B B A, repeated --rounds times, every run pinned to the same
CPU and holding the shared benchmark lock, so both sides see the same machine state. Our figures
come from the tools' JSON; the peers' from their own output. The result is markdown tables of
medians, the ratio ours/peer and the run-to-run spread, which docs/validation.md explains.

Peers: likwid-bench, mbw, sysbench (Debian packages likwid, mbw, sysbench) and, when --lmbench
names a folder holding lmbench's own bw_mem and lat_mem_rd built from its sources, the
reference itself:

- bw_mem: every lmbench operation (rd wr rdwr cp fwr frd fcp bzero bcopy) at every size of
  lmbench's harness up to --bw-max (512 bytes, 1k, 2k, ... 64m), each (operation, size) its
  own A B B A.
- lat_mem_rd: sequential and -t chains at strides 16 32 64 128 256 512 1024 (the harness's),
  the whole size sweep up to --lat-len MiB, both tools at lmbench's 100 ms interval floor;
  one run covers every stride of a mode. Sizes are grouped into bands (L1, L2, L3, memory
  from the caches sysfs reports), and the fields lmbench's summary reads are shown alone.
- lat_mem_rd --c2c against nviennot's core-to-core-latency (`cargo install
  core-to-core-latency`), its compare-and-swap benchmark, on two CPUs.
- lat_mem_rd --loaded against google/multichase's multiload (built from its sources), unloaded
  and with one streaming-read load thread, at --size MiB.
- the clock benchmp's probe measures (its three chains, the mean of a child's two probes of a
  `dhry --runs` run) against lmbench's own `mhz` (in --lmbench DIR), on the same CPU.

Both tools get ENOUGH, TIMING_O and LOOP_O from benchmp's cached calibration (lmbench's own
variables, which both honour), so they time intervals of one length and subtract the same
overheads, each by its own rule. The run-to-run spread of a side is max/min - 1 over its runs
of one figure; a difference "agrees" when |ours/lmbench - 1| is within the larger of the two
sides' spreads, or within 1 % (what a few runs resolve) when both spreads are smaller.

Usage: scripts/validate.py [--rounds R] [--cpu N] [--bin DIR] [--lmbench DIR]
                           [--only bw|lat|peers|c2c|loaded|clock] [--size MIB] [--bw-max SIZE]
                           [--c2c-tool PATH] [--multiload PATH]
                           [--bw-sizes LIST] [--ops LIST] [--lmbench-build O|O2] [--lat-len MIB]
                           [--strides LIST] [--modes seq,rand] [--lat-n N] [--save FILE]
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
LMBENCH_OPS = ("rd", "wr", "rdwr", "cp", "fwr", "frd", "fcp", "bzero", "bcopy")
HARNESS_STRIDES = (16, 32, 64, 128, 256, 512, 1024)


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


def parse_size(s):
    """lmbench's size syntax: a number with an optional k or m suffix (powers of 1024)."""
    m = re.fullmatch(r"(\d+)([kKmM]?)", s)
    if not m:
        raise argparse.ArgumentTypeError(f"bad size {s!r}")
    return int(m.group(1)) * {"": 1, "k": 1024, "m": MIB}[m.group(2).lower()]


def harness_sizes(max_bytes):
    """lmbench's harness sizes ($ALL in scripts/lmbench): 512 bytes doubling to max_bytes."""
    out, s = [], 512
    while s <= max_bytes:
        out.append(s)
        s *= 2
    return out


def size_name(n):
    if n >= MIB and n % MIB == 0:
        return f"{n // MIB}m"
    if n >= 1024 and n % 1024 == 0:
        return f"{n // 1024}k"
    return str(n)


class Ours:
    """bw_mem / lat_mem_rd of this workspace, figures read from --json."""

    def __init__(self, bindir, cpu, env, bw_args=()):
        self.bindir = bindir
        self.cpu = cpu
        self.env = env
        self.bw_args = list(bw_args)

    def bw(self, op, size, reps=5):
        with tempfile.NamedTemporaryFile(suffix=".json") as f:
            run([f"{self.bindir}/bw_mem", "--cpus", str(self.cpu), "-N", str(reps), *self.bw_args,
                 size_name(size), op, f"--json={f.name}"], env=self.env)
            r = json.load(open(f.name))
        return r["measurements"][0]["aggregate"]["cluster"]

    def lat(self, length_mib, strides, random, reps):
        """{(stride, size): ns} for every stride of one run (the figure on the text line)."""
        args = [f"{self.bindir}/lat_mem_rd", "--cpus", str(self.cpu), "-N", str(reps)]
        if random:
            args.append("-t")
        with tempfile.NamedTemporaryFile(suffix=".json") as f:
            run(args + [str(length_mib)] + [str(s) for s in strides] + [f"--json={f.name}"],
                env=self.env)
            r = json.load(open(f.name))
        return {(c["stride_bytes"], p["size_bytes"]): p["ns"]
                for c in r["extra"]["curves"] for p in c["points"]}


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


def lmbench_bw(lmdir, op, size, cpu, reps, env):
    _, err = run(["taskset", "-c", str(cpu), f"{lmdir}/bw_mem", "-N", str(reps), size_name(size), op],
                 env=env)
    return float(err.split()[1])


def lmbench_lat(lmdir, length_mib, strides, random, reps, env, cpu):
    """{(stride, size): ns} from lmbench's own lat_mem_rd output."""
    args = ["taskset", "-c", str(cpu), f"{lmdir}/lat_mem_rd", "-N", str(reps)]
    if random:
        args.append("-t")
    _, err = run(args + [str(length_mib)] + [str(s) for s in strides], env=env)
    points, stride = {}, None
    for line in err.splitlines():
        if line.startswith('"stride='):
            stride = int(line[len('"stride='):])
            continue
        parts = line.split()
        if len(parts) == 2 and stride is not None:
            points[(stride, grid_size(float(parts[0]) * MIB))] = float(parts[1])
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


def spread(vals):
    """Run-to-run spread: max/min - 1."""
    return max(vals) / min(vals) - 1 if vals and min(vals) > 0 else float("nan")


# Differences below this are not resolved by a few runs on a shared host, even when the runs
# of one side happen to agree more closely.
RESOLUTION = 0.01


def compare(xs, ys):
    """(ours median, peer median, ratio, ours spread, peer spread, agrees)."""
    a, b = statistics.median(xs), statistics.median(ys)
    sa, sb = spread(xs), spread(ys)
    ratio = a / b if b else float("nan")
    return a, b, ratio, sa, sb, abs(ratio - 1) <= max(sa, sb, RESOLUTION)


def calibration_env():
    """ENOUGH, TIMING_O and LOOP_O (lmbench's variables, honoured by both tools) from benchmp's
    cached calibration, so both tools use one interval and subtract the same overheads, each by
    its own rule; lmbench then skips its own (noisy) calibration."""
    path = os.path.expanduser("~/.cache/socbench/calibration.json")
    try:
        c = json.load(open(path))
        return {"ENOUGH": str(c["enough_us"]), "TIMING_O": str(c["timing_overhead_ns"] / 1000),
                "LOOP_O": str(c["loop_overhead_ns"] / 1000)}
    except (OSError, ValueError, KeyError):
        return {"ENOUGH": "5000", "TIMING_O": "0", "LOOP_O": "0"}


def cache_levels(cpu):
    """[(name, bytes)] of the data and unified caches sysfs reports for `cpu`, smallest first."""
    out = []
    base = f"/sys/devices/system/cpu/cpu{cpu}/cache"
    try:
        entries = sorted(os.listdir(base))
    except OSError:
        return out
    for e in entries:
        if not e.startswith("index"):
            continue
        try:
            kind = open(f"{base}/{e}/type").read().strip()
            level = open(f"{base}/{e}/level").read().strip()
            size = parse_size(open(f"{base}/{e}/size").read().strip().replace("K", "k").replace("M", "m"))
        except (OSError, argparse.ArgumentTypeError):
            continue
        if kind in ("Data", "Unified"):
            out.append((f"L{level}", size))
    return sorted(out, key=lambda x: x[1])


def band_of(size, levels):
    """The level a size fits in: half of each cache's size or less, else the next one;
    sizes between half and all of a cache are 'edge' (their latency depends on the run)."""
    for name, cap in levels:
        if size <= cap // 2:
            return name
        if size <= cap:
            return f"{name} edge"
    return "memory"


def fmt(x):
    if x is None or x != x:
        return "-"
    return f"{x:,.0f}" if abs(x) >= 100 else f"{x:.3g}"


def pct(x):
    return "-" if x != x else f"{x * 100:.0f} %"


def lat_tables(xs, ys, strides, mode, length, levels, rounds):
    """Markdown tables for one mode: the bands per stride, then the summary's fields."""
    name = "-t " if mode == "rand" else ""
    lines = [f"#### `lat_mem_rd {name}{length} <stride>`: ours / lmbench, ns per load",
             "",
             f"Medians over the sizes of a band of each run, then over the runs (A B B A x {rounds});",
             "spread = max/min - 1 of each side's run medians; 'agrees' when the ratio is within",
             "the larger spread (at least 1 %).",
             "",
             "| stride | band | sizes | ours | lmbench | ours/lmbench | spread ours | spread lmbench | agrees |",
             "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
    order = [b for n, _ in levels for b in (n, f"{n} edge")] + ["memory"]
    for stride in strides:
        sizes = sorted({s for (st, s) in xs[0] if st == stride})
        bands = {}
        for s in sizes:
            if all((stride, s) in c for c in xs + ys):
                bands.setdefault(band_of(s, levels), []).append(s)
        for band in sorted(bands, key=lambda b: order.index(b) if b in order else 99):
            ss = bands[band]
            per_run = lambda runs: [statistics.median([c[(stride, s)] for s in ss]) for c in runs]
            a, b, r, sa, sb, ok = compare(per_run(xs), per_run(ys))
            lines.append(f"| {stride} | {band} | {len(ss)} | {fmt(a)} | {fmt(b)} | {r:.3f} | "
                         f"{pct(sa)} | {pct(sb)} | {'yes' if ok else 'NO'} |")
    lines += ["", f"Fields of lmbench's summary and the issue's 52-64 MiB window ({name.strip() or 'sequential'}):", "",
              "| field | stride | size | ours | lmbench | ours/lmbench | spread ours | spread lmbench | agrees |",
              "| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | --- |"]
    top = length * MIB
    fields = []
    if mode == "seq":
        fields += [("L1 $", 128, [1024]), ("L2 $", 128, [128 * 1024]), ("Main mem", 128, [top])]
    else:
        fields += [("Rand mem", 16, [top])]
    for stride in strides:
        window = [s for (st, s) in xs[0] if st == stride and 52 * MIB <= s <= 64 * MIB]
        if window:
            fields.append(("52-64 MiB", stride, sorted(window)))
    for label, stride, ss in fields:
        if not all((stride, s) in c for s in ss for c in xs + ys):
            continue
        per_run = lambda runs: [statistics.median([c[(stride, s)] for s in ss]) for c in runs]
        a, b, r, sa, sb, ok = compare(per_run(xs), per_run(ys))
        where = size_name(ss[0]) if len(ss) == 1 else f"{size_name(ss[0])}-{size_name(ss[-1])}"
        lines.append(f"| {label} | {stride} | {where} | {fmt(a)} | {fmt(b)} | {r:.3f} | "
                     f"{pct(sa)} | {pct(sb)} | {'yes' if ok else 'NO'} |")
    return lines


def bw_lmbench(args, ours, env):
    ops = args.ops.split(",") if args.ops else list(LMBENCH_OPS)
    sizes = ([parse_size(s) for s in args.bw_sizes.split(",")] if args.bw_sizes
             else harness_sizes(args.bw_max))
    lines = ["#### `bw_mem <size> <op>`: ours / lmbench, MB/s", "",
             f"A B B A x {args.rounds} per (operation, size); -N 5 both; both given "
             f"ENOUGH={env['ENOUGH']} TIMING_O={env['TIMING_O']} LOOP_O={env['LOOP_O']}.", "",
             "| op | size | ours | lmbench | ours/lmbench | spread ours | spread lmbench | agrees |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
    raw = {}
    for op in ops:
        for size in sizes:
            xs, ys = abba(lambda: ours.bw(op, size),
                          lambda: lmbench_bw(args.lmbench, op, size, args.cpu, 5, env),
                          args.rounds)
            raw[f"{op} {size}"] = {"ours": xs, "lmbench": ys}
            a, b, r, sa, sb, ok = compare(xs, ys)
            print(f"bw_mem {op} {size_name(size)}: {a:.0f} / {b:.0f} = {r:.3f}", file=sys.stderr)
            lines.append(f"| {op} | {size_name(size)} | {fmt(a)} | {fmt(b)} | {r:.3f} | "
                         f"{pct(sa)} | {pct(sb)} | {'yes' if ok else 'NO'} |")
    return lines, raw


def lat_lmbench(args, ours, env):
    strides = [int(s) for s in args.strides.split(",")]
    levels = cache_levels(args.cpu)
    lines, raw = [], {}
    for mode in args.modes.split(","):
        random = mode == "rand"
        xs, ys = abba(lambda: ours.lat(args.lat_len, strides, random, args.lat_n),
                      lambda: lmbench_lat(args.lmbench, args.lat_len, strides, random, args.lat_n,
                                          env, args.cpu),
                      args.rounds)
        raw[mode] = {"ours": [{f"{k[0]} {k[1]}": v for k, v in c.items()} for c in xs],
                     "lmbench": [{f"{k[0]} {k[1]}": v for k, v in c.items()} for c in ys]}
        lines += lat_tables(xs, ys, strides, mode, args.lat_len, levels, args.rounds) + [""]
        print(f"lat_mem_rd {mode}: done", file=sys.stderr)
    return lines, raw


def peers(args, ours):
    size = args.size
    nbytes = size * MIB
    have = {t: shutil.which(t) is not None for t in ("likwid-bench", "mbw", "sysbench")}
    cmp = [
        # (ours op, peer label, peer function, factor applied to the peer)
        ("rd", "likwid-bench load", lambda: likwid("load", nbytes, args.cpu), 1.0),
        ("rdvec", "likwid-bench load_avx512", lambda: likwid("load_avx512", nbytes, args.cpu), 1.0),
        ("frd", "sysbench memory read", lambda: sysbench("read", size, args.cpu), 1.0),
        ("wr", "likwid-bench store", lambda: likwid("store", nbytes, args.cpu), 1.0),
        ("fwr", "sysbench memory write", lambda: sysbench("write", size, args.cpu), 1.0),
        ("wrnt", "likwid-bench store_mem_avx512", lambda: likwid("store_mem_avx512", nbytes, args.cpu), 1.0),
        ("bcopy", "mbw MEMCPY", lambda: mbw(0, size, args.cpu), 1.0),
        ("cp", "mbw DUMB", lambda: mbw(1, size, args.cpu), 1.0),
        ("fcp", "likwid-bench copy / 2", lambda: likwid("copy", 2 * nbytes, args.cpu), 0.5),
        ("cpnt", "likwid-bench copy_mem_avx512 / 2", lambda: likwid("copy_mem_avx512", 2 * nbytes, args.cpu), 0.5),
    ]
    lines = [f"#### `bw_mem {size}m <op>` against other tools, MB/s", "",
             "| op | peer | ours | peer | ours/peer | spread ours | spread peer |",
             "| --- | --- | ---: | ---: | ---: | ---: | ---: |"]
    for op, label, peer, factor in cmp:
        tool = label.split()[0]
        if not have.get(tool, False):
            print(f"skipped {label}: {tool} not installed", file=sys.stderr)
            continue
        try:
            xs, ys = abba(lambda: ours.bw(op, nbytes), lambda: peer() * factor, args.rounds)
        except RuntimeError as e:
            print(f"skipped {op} vs {label}: {e}", file=sys.stderr)
            continue
        a, b, r, sa, sb, _ = compare(xs, ys)
        lines.append(f"| {op} | {label} | {fmt(a)} | {fmt(b)} | {r:.3f} | {pct(sa)} | {pct(sb)} |")
    return lines


def two_cpus(args, what):
    """--cpu (or the first allowed CPU) and the next allowed one; (None, None) when this
    process may use only one."""
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        print(f"skipped {what}: needs two CPUs", file=sys.stderr)
        return None, None
    a = args.cpu if args.cpu in cpus else cpus[0]
    return a, next(c for c in cpus if c != a)


def c2c_peer(args, ours):
    """lat_mem_rd --c2c against core-to-core-latency's CAS benchmark (-b 1), CPUs --cpu and the
    next allowed one: the mean of the two directions, ns per one-way transfer."""
    tool = args.c2c_tool
    a, b = two_cpus(args, "c2c")
    if a is None:
        return []
    pair = f"{a},{b}"

    def mine():
        with tempfile.NamedTemporaryFile(suffix=".json") as f:
            run([f"{ours.bindir}/lat_mem_rd", "--c2c", "--cpus", pair, "-N", "11",
                 f"--json={f.name}"], env=ours.env)
            m = json.load(open(f.name))["extra"]
        return (m["ns"][0][1] + m["ns"][1][0]) / 2

    def theirs():
        out, _ = run([tool, "--cores", pair, "-b", "1", "--csv"])
        vals = [float(v) for v in re.findall(r"[0-9]+\.[0-9]+", out)]
        if not vals:
            raise RuntimeError("core-to-core-latency: no figure in its CSV")
        return statistics.mean(vals)

    xs, ys = abba(mine, theirs, args.rounds)
    a_, b_, r, sa, sb, ok = compare(xs, ys)
    return [f"#### `lat_mem_rd --c2c --cpus {pair}` against core-to-core-latency `-b 1`, ns per one-way transfer",
            "", "| ours | core-to-core-latency | ours/peer | spread ours | spread peer | agrees |",
            "| ---: | ---: | ---: | ---: | ---: | --- |",
            f"| {a_:.1f} | {b_:.1f} | {r:.3f} | {pct(sa)} | {pct(sb)} | {'yes' if ok else 'no'} |"]


def loaded_peer(args, ours):
    """lat_mem_rd --loaded against multichase's multiload: unloaded (-c simple) and with one
    streaming-read load (-c chaseload -l stream-sum, our --load rd with delay 0), chase on
    --cpu, load on the next allowed CPU, --size MiB each, 64-byte stride, one random order
    over the whole buffer (multiload -T SIZE), so that nearly every load is on another page,
    as in lmbench's -t chain (multiload's default groups loads by pages, with far fewer TLB
    misses). Also compared: the change under load, loaded over unloaded latency."""
    a, b = two_cpus(args, "loaded")
    if a is None:
        return []
    size = f"{args.size}m"

    def mine():
        with tempfile.NamedTemporaryFile(suffix=".json") as f:
            run([f"{ours.bindir}/lat_mem_rd", "--loaded", size, "--cpus", str(a), "--load-cpus",
                 str(b), "--load", "rd", "--delays", "0", "-N", "5", f"--json={f.name}"],
                env=ours.env)
            rows = json.load(open(f.name))["extra"]["rows"]
        idle, loaded = rows[0]["latency_ns"], rows[1]["latency_ns"]
        return idle, loaded, rows[1]["load_mb_s"], loaded / idle

    def multiload(extra):
        out, _ = run(["taskset", "-c", f"{a},{b}", args.multiload, "-s", "64", "-T", size,
                      "-m", size, "-n", "5"] + extra)
        line = [ln for ln in out.splitlines() if ln.strip() and ln.strip()[0].isdigit()][-1]
        f = [x.strip() for x in line.split(",")]
        # Samples, Byte/thd, ChaseThds, ChaseNS, ChaseMibs, ChDeviate, LoadThds, LdMaxMibs,
        # LdAvgMibs (MiB/s: converted to MB/s)
        return float(f[3]), float(f[8]) * MIB / 1e6

    def theirs():
        idle, _ = multiload(["-c", "simple", "-t", "1"])
        loaded, mb = multiload(["-c", "chaseload", "-l", "stream-sum", "-t", "2"])
        return idle, loaded, mb, loaded / idle

    xs, ys = abba(mine, theirs, args.rounds)
    lines = [f"#### `lat_mem_rd --loaded {size} --load rd --delays 0` against multiload, chase on CPU {a}, load on CPU {b}",
             "", "| figure | ours | multiload | ours/peer | spread ours | spread peer | agrees |",
             "| --- | ---: | ---: | ---: | ---: | ---: | --- |"]
    for i, name in enumerate(("unloaded latency, ns", "loaded latency, ns", "load bandwidth, MB/s",
                              "loaded / unloaded")):
        a_, b_, r, sa, sb, ok = compare([x[i] for x in xs], [y[i] for y in ys])
        lines.append(f"| {name} | {fmt(a_)} | {fmt(b_)} | {r:.3f} | {pct(sa)} | {pct(sb)} | {'yes' if ok else 'no'} |")
    return lines


def clock_lmbench(args):
    """Our probed clock against lmbench's `mhz`, A B B A: each of ours is a short pinned dhry
    run whose child probes its clock before and after its loop (the JSON keeps both probes and
    every chain); lmbench's is its `mhz` line. A probe whose chains disagree counts as unknown."""
    mhz = os.path.join(args.lmbench, "mhz")
    if not os.access(mhz, os.X_OK):
        return [f"clock: no lmbench mhz at {mhz} (build it from lmbench's src/mhz.c)"]
    unknown = []

    def ours():
        out, _ = run([os.path.join(args.bin, "dhry"), "--cpus", str(args.cpu), "--runs",
                      "20000000", "--json"])
        clock = json.loads(out)["measurements"][0]["children"][0]["clock"]
        probes = [clock["before"], clock["after"]]
        if any("mhz" not in p for p in probes):
            unknown.append([p.get("unknown") for p in probes])
            return float("nan")
        return (probes[0]["mhz"] + probes[1]["mhz"]) / 2

    def theirs():
        out, _ = run(["taskset", "-c", str(args.cpu), mhz])
        return float(out.split()[0])

    xs, ys = abba(ours, theirs, args.rounds)
    known = [x for x in xs if x == x]
    lines = ["| ours, MHz (each run) | lmbench `mhz`, MHz (each run) | ours / lmbench |",
             "| --- | --- | ---: |"]
    ratio = statistics.median(known) / statistics.median(ys) if known else float("nan")
    lines.append(f"| {' '.join(f'{x:.0f}' for x in xs)} | {' '.join(f'{y:.0f}' for y in ys)} "
                 f"| {ratio:.3f} |")
    for u in unknown:
        lines.append(f"unknown clock in one of ours: {u}")
    return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--cpu", type=int, default=1)
    ap.add_argument("--bin", default=os.path.join(os.environ.get("CARGO_TARGET_DIR", "target"), "release"))
    ap.add_argument("--lmbench", help="folder with lmbench's bw_mem and lat_mem_rd binaries")
    ap.add_argument("--only", choices=["bw", "lat", "peers", "c2c", "loaded", "clock"])
    ap.add_argument("--c2c-tool", default=shutil.which("core-to-core-latency"),
                    help="core-to-core-latency binary (cargo install core-to-core-latency)")
    ap.add_argument("--multiload", default=shutil.which("multiload"),
                    help="multichase's multiload, built from github.com/google/multichase")
    ap.add_argument("--size", type=int, default=256, help="peer comparisons' buffer, MiB")
    ap.add_argument("--bw-max", type=parse_size, default=64 * MIB,
                    help="largest bw_mem size against lmbench (default 64m, as the harness's MB)")
    ap.add_argument("--bw-sizes", help="comma-separated bw_mem sizes instead of the harness's")
    ap.add_argument("--ops", help="comma-separated bw_mem operations (default: lmbench's nine)")
    ap.add_argument("--lmbench-build", choices=["O", "O2"],
                    help="our bw_mem's --lmbench-build (default: its own default, O2); give the "
                         "build --lmbench DIR was compiled with")
    ap.add_argument("--lat-len", type=int, default=64, help="latency sweep length, MiB")
    ap.add_argument("--strides", default=",".join(map(str, HARNESS_STRIDES)))
    ap.add_argument("--modes", default="seq,rand", help="seq, rand or both")
    ap.add_argument("--lat-n", type=int, default=1, help="repetitions per size (-N), both tools")
    ap.add_argument("--save", help="write every run's figures to this JSON file")
    args = ap.parse_args()
    env = calibration_env()
    bw_args = ["--lmbench-build", args.lmbench_build] if args.lmbench_build else []
    ours = Ours(args.bin, args.cpu, env, bw_args)

    out, raw = [], {}
    if args.only in (None, "peers"):
        out += peers(args, ours) + [""]
    if args.only in (None, "c2c"):
        if args.c2c_tool:
            out += c2c_peer(args, ours) + [""]
        else:
            print("skipped c2c: no core-to-core-latency (--c2c-tool)", file=sys.stderr)
    if args.only in (None, "loaded"):
        if args.multiload:
            out += loaded_peer(args, ours) + [""]
        else:
            print("skipped loaded: no multiload (--multiload)", file=sys.stderr)
    if args.lmbench and args.only in (None, "clock"):
        out += clock_lmbench(args) + [""]
    if args.lmbench and args.only in (None, "bw"):
        lines, raw["bw"] = bw_lmbench(args, ours, env)
        out += lines + [""]
    if args.lmbench and args.only in (None, "lat"):
        lines, raw["lat"] = lat_lmbench(args, ours, env)
        out += lines
    if args.only in ("bw", "lat", "clock") and not args.lmbench:
        print("validate: --only bw/lat/clock compares with lmbench and needs --lmbench DIR", file=sys.stderr)
        return 2
    print("\n".join(out))
    if args.save:
        with open(args.save, "w") as f:
            json.dump(raw, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
