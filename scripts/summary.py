#!/usr/bin/env python3
"""Prints the suite's summary table from a results folder.

Reads status.tsv (written by suite.sh), each entry's JSON report (its `figures`, the same
for every tool) and, after `suite.sh --baseline`, compare.json for a verdict column; never
scrapes text output. Every entry of the plan gets a row, failed ones included.

Usage: scripts/summary.py RESULTS_DIR
"""
import csv
import json
import pathlib
import sys


def number(x):
    if x is None:
        return "-"
    if abs(x) >= 100:
        return f"{x:,.0f}"
    if abs(x) >= 1:
        return f"{x:.2f}"
    return f"{x:.4f}"


def figure_row(data):
    """Figure, unit and note of a report, from its `figures` (every tool's report has them):
    one figure is shown as it is; a few are listed in the note; many are summed up by their
    range. Reports from before figures were kept fall back to their measurements."""
    notes = []
    if data.get("quality", {}).get("verdict", {}).get("noisy"):
        notes.append("noisy")
    figs = data.get("figures") or []
    if not figs:
        ms = data.get("measurements", [])
        if not ms:
            return None, "", "no measurement"
        mode = data.get("aggregate_mode", "cluster")
        last = ms[-1]
        return last["aggregate"].get(mode), last["metric"]["unit"], ", ".join(notes)
    units = {f.get("unit", "") for f in figs}
    unit = units.pop() if len(units) == 1 else ""
    if len(figs) == 1:
        f = figs[0]
        return f.get("value"), f.get("unit", ""), ", ".join(notes)
    names = [f.get("name", "?") for f in figs]
    prefix = common_prefix(names)
    if len(figs) <= 6:
        notes.insert(0, ", ".join(
            f"{where(f, n[len(prefix):] or n)} {number(f.get('value'))}" for f, n in zip(figs, names)))
        return figs[-1].get("value"), unit, ", ".join(notes)
    values = [f.get("value") for f in figs if isinstance(f.get("value"), (int, float))]
    if values:
        notes.insert(0, f"{len(figs)} figures from {number(min(values))} to {number(max(values))}")
    return (sorted(values)[len(values) // 2] if values else None), unit + " (median figure)", ", ".join(notes)


def where(f, name):
    """A figure's name with its CPU or cluster when it has one."""
    if f.get("cpu") is not None:
        return f"{name} cpu{f['cpu']}"
    return name


def common_prefix(names):
    """The words every name starts with (kept when it is all of a name)."""
    words = [n.split(" ") for n in names]
    k = 0
    while all(len(w) > k + 1 and w[k] == words[0][k] for w in words):
        k += 1
    return " ".join(words[0][:k]) + (" " if k else "")


def verdicts(out):
    """Per entry, the worst verdict of `benchmp compare` or the paired `benchmp ab`
    (compare.json) and its count, and what an entry without one shows."""
    path = out / "compare.json"
    if not path.exists():
        return None, None
    try:
        data = json.loads(path.read_text())
        rows = data.get("rows", [])
    except ValueError:
        return None, None
    order = ["FAIL", "NOISY", "MISSING", "IMPROVED", "PASS", "REF"]
    per = {}
    for r in rows:
        per.setdefault(r.get("entry"), []).append(r.get("verdict", "?"))
    result = {}
    for entry, vs in per.items():
        worst = min(vs, key=lambda v: order.index(v) if v in order else len(order))
        result[entry] = f"{worst} ({vs.count(worst)}/{len(vs)})" if len(vs) > 1 else worst
    return result, ("not paired" if data.get("paired") else "MISSING")


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    out = pathlib.Path(sys.argv[1])
    status = out / "status.tsv"
    if not status.exists():
        print(f"summary.py: {status} not found", file=sys.stderr)
        return 2
    rows = []
    with status.open() as f:
        for r in csv.DictReader(f, delimiter="\t"):
            label, tool, code = r["label"], r["tool"], int(r["exit"])
            js = out / f"{label}.json"
            figure, unit, note = None, "", ""
            if js.exists() and js.stat().st_size > 0:
                try:
                    figure, unit, note = figure_row(json.loads(js.read_text()))
                except (ValueError, KeyError, TypeError) as e:
                    note = f"unreadable JSON: {e}"
            if code != 0:
                err = (out / f"{label}.err")
                first = ""
                if err.exists():
                    lines = [l for l in err.read_text(errors="replace").splitlines() if l.strip()]
                    first = lines[-1][:80] if lines else ""
                note = f"FAILED (exit {code}) {first}".strip()
            rows.append((label, tool, number(figure), unit, r["seconds"], note))
    judged, unjudged = verdicts(out)
    head = ("entry", "tool", "figure", "unit", "s")
    if judged is not None:
        rows = [r[:5] + (judged.get(r[0], unjudged),) + r[5:] for r in rows]
        head = head + ("verdict",)
    n = len(head)
    widths = [max(len(str(x[i])) for x in rows + [head]) for i in range(n)]
    print()
    print("  ".join(h.ljust(w) for h, w in zip(head, widths)) + "  notes")
    print("  ".join("-" * w for w in widths) + "  -----")
    for row in rows:
        cells = [str(row[i]).rjust(widths[i]) if i in (2, 4) else str(row[i]).ljust(widths[i]) for i in range(n)]
        print("  ".join(cells) + "  " + row[n])
    failed = sum(1 for r in rows if r[-1].startswith("FAILED"))
    tools = sorted({r[1] for r in rows})
    print(f"\n{len(rows)} entries over {len(tools)} tools ({', '.join(tools)}); {failed} failed. Results: {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
