#!/usr/bin/env python3
"""Gathers the `benchmp ab` reports of a `suite.sh --ab` run into the results folder's
comparison files, in the layout `benchmp compare` writes, so the summary's verdict column and
the regression plots read them the same way.

OUT/ab/LABEL.json (one `benchmp ab --json` report per entry) become:
- OUT/compare.json: a comparison (entries, figures, both sides' repetitions, verdicts; each
  row also carries its pairs' log ratios, `differences`, for the plots);
- OUT/compare.csv: one row per figure;
- OUT/compare.txt: every entry's table, then the counts.

Usage: ab_compare.py OUT
"""
import csv
import json
import os
import pathlib
import sys

import suite_record


def side(values, median):
    return {
        "cpu": None,
        "value": median,
        "trimmed_mean": median,
        "n": len(values),
        "outliers": 0,
        "samples": sorted(values),
        "noisy": False,
    }


def rows_of(label, report):
    rows = []
    for f in report.get("figures", []):
        j = f["judgement"]
        rows.append({
            "entry": label,
            "tool": report["base"]["tool"],
            "figure": f["measurement"],
            "unit": f["unit"],
            "better": f["better"],
            "base": side(f["base_values"], f["base_median"]),
            "current": side(f["current_values"], f["current_median"]),
            "change_pct": j["estimate_pct"],
            "ks_d": None,
            "ks_p": None,
            "verdict": f["verdict"],
            "why": j.get("why"),
            "pairs": len(f["differences"]),
            "processes": len(f.get("processes", [])) or 1,
            "low_pct": j["low_pct"],
            "high_pct": j["high_pct"],
            "seconds": f["seconds"],
            "differences": f["differences"],
        })
    return rows


def write_whole(path, write):
    """Writes `path` whole or not at all: beside it first, renamed over it when complete."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with tmp.open("w", newline="") as f:
            write(f)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    out = pathlib.Path(sys.argv[1])
    reports = sorted((out / "ab").glob("*.json"))
    rows, rule, base, current = [], None, "", ""
    for path in reports:
        try:
            r = json.loads(path.read_text())
        except ValueError as e:
            print(f"ab_compare.py: {path}: not JSON ({e})", file=sys.stderr)
            return 1
        rows += rows_of(path.stem, r)
        rule = rule or r["rule"]
        base = base or r["base"]["command"]
        current = current or r["current"]["command"]
    counts = {k: sum(r["verdict"] == k.upper() for r in rows)
              for k in ["pass", "fail", "improved", "noisy", "missing"]}
    comparison = {
        "base": base,
        "current": current,
        "rule": {"min_effect_pct": rule["min_effect_pct"] if rule else 2.0,
                 "alpha": rule["alpha"] if rule else 0.05},
        "rows": rows,
        "counts": counts,
        "paired": True,
    }
    made = [out / f"compare.{x}" for x in ("json", "csv", "txt")]
    # Recorded before they are made, as the suite records its own files.
    if (out / suite_record.RECORD).is_file():
        why = suite_record.record(out, made)
        if why:
            print(f"ab_compare.py: the comparison is not recorded as the suite's: {why}", file=sys.stderr)
    write_whole(out / "compare.json", lambda f: f.write(json.dumps(comparison, indent=1) + "\n"))

    def table(f):
        w = csv.writer(f)
        w.writerow(["entry", "figure", "unit", "better", "base_median", "current_median",
                    "processes", "pairs", "seconds", "change_pct", "low_pct", "high_pct", "verdict", "why"])
        for r in rows:
            w.writerow([r["entry"], r["figure"], r["unit"], r["better"],
                        r["base"]["value"], r["current"]["value"], r["processes"], r["pairs"],
                        r["seconds"], r["change_pct"], r["low_pct"], r["high_pct"],
                        r["verdict"], r["why"] or ""])
    write_whole(out / "compare.csv", table)

    def text(f):
        for path in reports:
            txt = path.with_suffix(".txt")
            f.write(f"== {path.stem}\n")
            if txt.exists():
                f.write(txt.read_text())
        f.write(f"{len(rows)} figures: {counts['pass']} PASS, {counts['fail']} FAIL, "
                f"{counts['improved']} IMPROVED, {counts['noisy']} NOISY, "
                f"{counts['missing']} MISSING (paired: benchmp ab)\n")
    write_whole(out / "compare.txt", text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
