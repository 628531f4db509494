#!/usr/bin/env python3
"""Prints the suite's summary table from a results folder.

Reads status.tsv (written by suite.sh) and each entry's JSON report; never scrapes text
output. Every entry of the plan gets a row, failed ones included.

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


def benchmp_row(data):
    """Figure, unit and note of a benchmp report (bw_mem, lat_mem_rd, dhry, coremark)."""
    mode = data.get("aggregate_mode", "cluster")
    ms = data.get("measurements", [])
    if not ms:
        return None, "", "no measurement"
    notes = []
    if data.get("quality", {}).get("verdict", {}).get("noisy"):
        notes.append("noisy")
    if len(ms) == 1:
        m = ms[0]
        agg = m["aggregate"]
        clusters = agg.get("per_cluster", [])
        if len(clusters) > 1:
            notes.append(
                "clusters " + " + ".join(number(c["total"]) for c in clusters)
            )
        notes.append(f"{len(m['children'])} child(ren)")
        return agg.get(mode), m["metric"]["unit"], ", ".join(notes)
    # A sweep: describe the curve by its ends and, when the tool found them, its plateaus
    # (lat_mem_rd: one summary per stride and cluster).
    extra = data.get("extra") or {}
    summaries = extra.get("summary") if isinstance(extra.get("summary"), list) else []
    for sm in summaries:
        plateaus = (sm.get("shape") or {}).get("plateaus") or []
        if plateaus:
            parts = [f"{p.get('label', '?')} {number(p.get('ns'))}" for p in plateaus]
            who = f"cluster {sm.get('cluster')}: " if len(summaries) > 1 else ""
            notes.insert(0, who + ", ".join(parts) + " ns")
    first = ms[0]["aggregate"].get(mode)
    last = ms[-1]["aggregate"].get(mode)
    notes.append(f"{len(ms)} sizes, first {number(first)}")
    return last, ms[-1]["metric"]["unit"] + " (largest size)", ", ".join(notes)


def other_row(tool, data):
    """Tools with their own JSON layout."""
    for key, unit in (
        ("iterations_per_s", "iterations/s"),
        ("dmips", "DMIPS"),
        ("dhrystones_per_s", "Dhrystones/s"),
    ):
        if isinstance(data.get(key), (int, float)):
            return data[key], unit, ""
    cells = data.get("cells")
    if isinstance(cells, list):
        # dto: A/B cells, regressions and the speedup table against libc.
        note = (f"{len(cells)} cells, {data.get('regressions', 0)} regressions, "
                f"{data.get('noisy', 0)} A/A noisy, {data.get('result', '?')}")
        speed = [x for x in data.get("speedup", []) if isinstance(x.get("speedup"), (int, float))]
        if speed:
            best = max(speed, key=lambda x: x["speedup"])
            note += f"; best {best['config']} {best['speedup']:.2f}x on {best['test']} ({best['pages']})"
            return best["speedup"], "x vs libc", note
        return None, "", note
    return None, "", "see JSON"


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
                    data = json.loads(js.read_text())
                    if "measurements" in data:
                        figure, unit, note = benchmp_row(data)
                    else:
                        figure, unit, note = other_row(tool, data)
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
    head = ("entry", "tool", "figure", "unit", "s", "notes")
    widths = [max(len(str(x[i])) for x in rows + [head]) for i in range(5)]
    print()
    print("  ".join(h.ljust(w) for h, w in zip(head, widths)) + "  notes")
    print("  ".join("-" * w for w in widths) + "  -----")
    for row in rows:
        cells = [str(row[i]).rjust(widths[i]) if i in (2, 4) else str(row[i]).ljust(widths[i]) for i in range(5)]
        print("  ".join(cells) + "  " + row[5])
    failed = sum(1 for r in rows if r[5].startswith("FAILED"))
    tools = sorted({r[1] for r in rows})
    print(f"\n{len(rows)} entries over {len(tools)} tools ({', '.join(tools)}); {failed} failed. Results: {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
