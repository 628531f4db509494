#!/usr/bin/env python3
"""LAVA's results of scripts/device.sh's job, printed and checked on the host.

Reads lava-run's log (one YAML mapping a line), prints every test case with its result,
measurement and units, takes the results archives the guest printed into its log
(socbench-archive-begin/-end, base64) and unpacks them into OUT/guest/, then checks:

- every LAVA test case passed (LAVA's own job cases included);
- the topology the guest's reports saw is the device's: as many clusters as CLUSTERS says,
  each of its size, with cpu_capacity CAPACITY scaled as the kernel does (the biggest 1024);
- the trace of the run over every CPU, converted here with `ftrace convert --json`, holds a
  begin and an end slice of every child of that run, whose CPUs span every cluster;
- the guest's reports say the CPU is emulated, and call no run noisy;
- `benchmp summary` reads each results folder, and `benchmp compare` the two suite runs.

No figure is judged. Usage: device_results.py OUT HOST_BIN "CLUSTERS" "CAPACITIES".
Exit status: 0 every check held, 1 one did not (each is a line starting with FAIL).
"""
import base64
import binascii
import io
import json
import pathlib
import subprocess
import sys
import tarfile

import yaml


def log_entries(path):
    """lava-run's log: one `{dt, lvl, msg}` mapping a line (JSON; `- ` before it in a YAML
    log)."""
    for line in path.read_text(errors="replace").splitlines():
        line = line[2:] if line.startswith("- {") else line
        if not line.startswith("{"):
            continue
        try:
            entry = json.loads(line)
        except ValueError:
            try:
                entry = yaml.safe_load(line)
            except yaml.YAMLError:
                continue
        if isinstance(entry, dict):
            yield entry


def main():
    out, host_bin = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    clusters = [int(n) for n in sys.argv[3].split()]
    capacity = [int(n) for n in sys.argv[4].split()]
    problems = []

    def need(ok, what):
        if not ok:
            problems.append(what)
            print(f"FAIL: {what}")

    results, archives, current, lines = [], {}, None, []
    for e in log_entries(out / "lava.log"):
        if e.get("lvl") == "results" and isinstance(e.get("msg"), dict):
            results.append(e["msg"])
        elif e.get("lvl") == "target" and isinstance(e.get("msg"), str):
            text = e["msg"].strip()
            if text.startswith("socbench-archive-begin "):
                current, lines = text.split()[1], []
            elif text.startswith("socbench-archive-end ") and current:
                archives[current] = "".join(lines)
                current = None
            elif current:
                lines.append(text)

    print(f"\n{'definition':<18} {'set':<12} {'case':<44} {'result':<7} measurement")
    for r in results:
        m = r.get("measurement")
        shown = "" if m in (None, "") else f"{m} {r.get('units') or ''}".strip()
        print(f"{str(r.get('definition')):<18} {str(r.get('set') or ''):<12} {str(r.get('case')):<44} "
              f"{str(r.get('result')):<7} {shown}")
    print(f"{len(results)} LAVA test cases\n")
    need(results, "lava-run reported no results (see lava.log)")
    # The one result other than pass that is right here: a parallel run whose children could
    # not all run at once (the emulated SoC's 6 vCPUs share the host's CPUs), refused by its
    # tool and reported unknown with its reason, apart.
    keys = {(r.get("definition"), r.get("case")) for r in results}
    def apart(r):
        case = str(r.get("case"))
        return r.get("result") == "unknown" and (
            case.endswith("-reason-apart") or (r.get("definition"), f"{case}-reason-apart") in keys)
    refused = [r for r in results if apart(r) and not str(r.get("case")).endswith("-reason-apart")]
    for r in results:
        need(r.get("result") == "pass" or apart(r), f"{r.get('definition')} {r.get('case')}: {r.get('result')}")
        if r.get("definition") != "lava" and r.get("measurement") not in (None, ""):
            need(r.get("units") not in (None, ""), f"{r.get('definition')} {r.get('case')}: a measurement without units")

    if refused:
        print(f"{len(refused)} parallel entries refused because their children ran apart (unknown): "
              + ", ".join(f"{r.get('definition')} {r.get('case')}" for r in refused))
    guest = out / "guest"
    guest.mkdir(exist_ok=True)
    for name, text in archives.items():
        try:
            data = base64.b64decode(text, validate=True)
            with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
                for member in tar.getmembers():
                    inside = pathlib.PurePosixPath(member.name)
                    if inside.is_absolute() or ".." in inside.parts or not (member.isfile() or member.isdir()):
                        raise ValueError(f"{member.name}: not a plain file inside the archive")
                tar.extractall(guest)
            print(f"from the guest's log: {name} ({len(data)} bytes) -> {guest}")
        except (binascii.Error, tarfile.TarError, OSError, ValueError) as e:
            need(False, f"the archive {name} in the log does not unpack: {e}")
    for folder in ("run-1", "soc", "run-2"):
        need((guest / folder / "status.tsv").is_file(), f"no results folder {folder} came back from the guest")
    if problems:
        return 1

    # The topology, as LAVA's cases give it.
    by_case = {(r.get("definition"), r.get("case")): r for r in results}
    scale = 1024 / max(capacity)
    for definition in sorted({d for d, _ in by_case if d and d != "lava"}):
        def value(case):
            r = by_case.get((definition, case))
            return float(r["measurement"]) if r and r.get("measurement") not in (None, "") else None
        need(value("topology-clusters") == len(clusters),
             f"{definition}: topology-clusters is {value('topology-clusters')}, the device has {len(clusters)}")
        for i, (size, cap) in enumerate(zip(clusters, capacity)):
            need(value(f"topology-cluster{i}-cpus") == size,
                 f"{definition}: cluster {i} has {value(f'topology-cluster{i}-cpus')} CPUs, not {size}")
            need(value(f"topology-cluster{i}-capacity") == round(cap * scale),
                 f"{definition}: cluster {i} capacity {value(f'topology-cluster{i}-capacity')}, not {round(cap * scale)}")
    print(f"topology: {len(clusters)} clusters of {', '.join(map(str, clusters))} CPUs, capacities "
          f"{', '.join(str(round(c * scale)) for c in capacity)}, in every definition's results")

    # Every report: an emulated CPU, said; no run called noisy.
    for report in sorted(guest.glob("*/*.json")):
        data = json.loads(report.read_text())
        if "host" not in data:
            continue
        v = data["host"].get("virtual_cpu") or {}
        need(v.get("kind") == "emulated", f"{report.relative_to(guest)}: host.virtual_cpu is {v or 'absent'}")
        need(not data["quality"]["verdict"]["noisy"], f"{report.relative_to(guest)}: called noisy on an emulated CPU")

    # The trace of the run over every cluster: a begin and an end slice of every child.
    xc = guest / "soc" / "xc-bw_mem-rd.json"
    need(xc.is_file(), "the traced run across clusters left no report (refused three times?)")
    if problems:
        return 1
    run = json.loads(xc.read_text())
    children = [c for m in run["measurements"] for c in m["children"]]
    converted = guest / "soc" / "xc-trace.json"
    done = subprocess.run([str(host_bin / "ftrace"), "convert", "--json", str(guest / "soc" / "xc-trace.txt"),
                           str(converted)], capture_output=True, text=True)
    print(done.stderr.strip())
    need(done.returncode == 0, f"ftrace convert failed ({done.returncode}): {done.stderr.strip()}")
    if done.returncode == 0:
        events = json.loads(converted.read_text())
        events = events.get("traceEvents", events) if isinstance(events, dict) else events
        begins, ends = {}, {}
        for ev in events:
            if ev.get("ph") == "B":
                begins[ev.get("pid")] = begins.get(ev.get("pid"), 0) + 1
            elif ev.get("ph") == "E":
                ends[ev.get("pid")] = ends.get(ev.get("pid"), 0) + 1
        topo = run["topology"]
        cluster_of = {c["id"]: c["cluster"] for c in topo["cpus"]}
        seen = set()
        for c in children:
            pid = c["pid"]
            need(begins.get(pid, 0) > 0 and begins.get(pid) == ends.get(pid),
                 f"child {c['index']} (pid {pid}, CPU {c['cpu']}): {begins.get(pid, 0)} begin and "
                 f"{ends.get(pid, 0)} end slices in the trace")
            seen.add(cluster_of.get(c["cpu"]))
        need(len(seen) == len(topo["clusters"]) >= 2,
             f"the traced run's children ran in clusters {sorted(seen, key=str)} of {len(topo['clusters'])}")
        slices = ", ".join(f"pid {c['pid']}: {begins.get(c['pid'], 0)}" for c in children)
        print(f"trace: {len(children)} children on CPUs {[c['cpu'] for c in children]} (clusters "
              f"{sorted(seen, key=str)}), begin/end slice pairs per child: {slices}")

    # benchmp summary of each folder, benchmp compare of the two suite runs.
    for folder in ("run-1", "soc", "run-2"):
        done = subprocess.run([str(host_bin / "benchmp"), "summary", str(guest / folder)], capture_output=True, text=True)
        print(f"\n== benchmp summary {folder}{done.stdout}")
        need(done.returncode == 0, f"benchmp summary {folder}: exit {done.returncode}: {done.stderr.strip()}")
    done = subprocess.run([str(host_bin / "benchmp"), "compare", str(guest / "run-1"), str(guest / "run-2")],
                          capture_output=True, text=True)
    # The second run has two tools only: the figures of the others are MISSING, counted.
    shown = [line for line in done.stdout.splitlines() if not line.rstrip().endswith(" MISSING")]
    missing = len(done.stdout.splitlines()) - len(shown)
    print("\n== benchmp compare run-1 run-2 (an emulated CPU's verdicts: shown, not judged)")
    print("\n".join(shown))
    print(f"({missing} figures of run-1 only, MISSING in run-2, left out above)")
    need(done.returncode in (0, 1), f"benchmp compare: exit {done.returncode}: {done.stderr.strip()}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
