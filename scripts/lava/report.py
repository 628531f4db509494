#!/usr/bin/env python3
"""Reports a socbench results folder as LAVA results.

Reads the folder's status.tsv and each entry's JSON report (never the text output) and turns
them into LAVA results: a test set per tool, a test case per suite entry with its headline
figure as the measurement (and, where the report has a power record, the energy and the figure
per energy of that measurement as cases of their own, in J and in the report's unit) (benchmp's rule, `benchmp summary --json`: the folder's
summary.json, written by the benchmp suite that ran it, else the output of --benchmp), fail (with the reason as a case of its own and a line in the log)
for an entry whose tool failed or left no report, and unknown (with the report's noise
reasons) for one whose report calls the run noisy: the tool worked, but its figure is not to
be trusted, which on a shared host is common and no failure. With --baseline it
runs `benchmp compare BASELINE RESULTS_DIR` and reports its outcome and every figure it
judged. Last it packs the folder
as RESULTS_DIR.tar.gz and, with --upload-url, posts the archive there and records its address
with lava-test-reference. scripts/lava/README.md lists every result name and unit.

Results go through LAVA's helpers (lava-test-set, lava-test-case, lava-test-reference) when
they are on PATH, as in a LAVA test shell; elsewhere the same results are printed as lines of
NAME RESULT [MEASUREMENT UNITS].

Usage: scripts/lava/report.py RESULTS_DIR [--baseline DIR] [--benchmp PATH] [--upload-url URL]

Exit status: 0 everything was reported (a failed entry is a fail result, not an error), 1 a
LAVA helper failed, 2 bad arguments or no results folder.
"""
import argparse
import csv
import json
import math
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tarfile
import urllib.error
import urllib.request
import uuid

# Reasons that make an entry unknown rather than a fail: the tool ran, its figure is shaky.
NOISE_ONLY = {"noisy"}
EXIT_UNSUPPORTED = 3
# benchmp compare's verdicts on one figure as LAVA results. IMPROVED and PASS pass, FAIL (a
# regression) fails; NOISY (a change the KS test cannot tell from the spread) is neither;
# MISSING (in one run only) was not compared.
COMPARE_RESULTS = {"PASS": "pass", "IMPROVED": "pass", "REF": "pass", "FAIL": "fail",
                   "NOISY": "unknown", "MISSING": "skip"}


def case_name(*parts):
    """A LAVA test case name: no white space; letters, digits, '.', '_' and '-' only."""
    text = "-".join(str(p) for p in parts if p not in (None, ""))
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-")


def unit_word(unit):
    """Units as one word LAVA's signal parser keeps intact."""
    return re.sub(r"[\s=<>]+", "_", str(unit)).strip("_") or None


def number(x):
    """x as a finite float, or None."""
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return None
    x = float(x)
    return x if math.isfinite(x) else None


def fmt(x):
    """A measurement as LAVA reads it (a decimal number, no thousands separators)."""
    if x == 0:
        return "0"
    if abs(x) >= 1e-3:
        return f"{x:.6f}".rstrip("0").rstrip(".")
    return f"{x:.6e}"


class Reasons:
    """Why an entry is not a pass: (kind, measurement, units, text) in the order found."""

    def __init__(self):
        self.items = []

    def add(self, kind, text, measurement=None, units=None):
        self.items.append((kind, measurement, units, text))

    def __bool__(self):
        return bool(self.items)


def last_error_line(out, label):
    """The last non-empty line the entry wrote to stderr, for the log."""
    err = out / f"{label}.err"
    if not err.exists():
        return ""
    lines = [line.strip() for line in err.read_text(errors="replace").splitlines() if line.strip()]
    return lines[-1][:200] if lines else ""


def load_report(path):
    """(data, None) or (None, why not)."""
    if not path.exists() or path.stat().st_size == 0:
        return None, f"no JSON report ({path.name})"
    try:
        return json.loads(path.read_text()), None
    except (OSError, ValueError) as e:
        return None, f"unreadable JSON report {path.name}: {e}"


def headlines(out, benchmp):
    """Each entry's headline figure and unit by label, as benchmp's rule chooses them (one
    rule for the suite's summary, this report and the tests): the folder's summary.json (the
    `benchmp summary --json` of the suite that wrote the folder), else `BENCHMP summary
    --json` run here. Returns (by label, why not) with an empty map when neither is there."""
    path = out / "summary.json"
    text = None
    if path.is_file():
        text = path.read_text()
    elif benchmp and runs_here(benchmp):
        done = subprocess.run([benchmp, "summary", "--json", str(out)], capture_output=True, text=True, check=False)
        if done.returncode != 0:
            return {}, f"benchmp summary failed: {done.stderr.strip()[:200]}"
        text = done.stdout
    else:
        return {}, "no summary.json in the folder and no benchmp that runs here (--benchmp)"
    try:
        entries = json.loads(text)["entries"]
    except (ValueError, KeyError, TypeError) as e:
        return {}, f"unreadable summary: {e}"
    # The headline with the energy of its measurement beside it, where the report has a power
    # record (the summary's `energy`: the figure per energy and the joules).
    return {e["entry"]: e.get("headline") and dict(e["headline"], energy=e.get("energy"))
            for e in entries}, None


def energy_cases(label, head):
    """(name, measurement, units) of the energy and the figure per energy of an entry's
    headline measurement: `LABEL-energy` in J (above the idle baseline) and `LABEL-per-energy`
    in the report's unit (DMIPS/W, iterations/J, MB/J, nJ/load)."""
    energy = (head or {}).get("energy") or {}
    out = []
    joules = number(energy.get("energy_j"))
    if joules is not None:
        out.append((case_name(label, "energy"), joules, "J"))
    per = number(energy.get("value"))
    if per is not None:
        out.append((case_name(label, "per-energy"), per, energy.get("unit")))
    return out


def plateau_cases(label, data):
    """lat_mem_rd: (name, ns) for every plateau its curve summary found (L1, L2, L3, DRAM)."""
    summaries = (data.get("extra") or {}).get("summary")
    if not isinstance(summaries, list):
        return []
    strides = {s.get("stride_bytes") for s in summaries}
    clusters = {s.get("cluster") for s in summaries}
    out = []
    for s in summaries:
        parts = [label]
        if len(strides) > 1:
            parts.append(f"s{s.get('stride_bytes')}")
        if len(clusters) > 1:
            parts.append(f"c{s.get('cluster')}")
        for p in (s.get("shape") or {}).get("plateaus") or []:
            ns = number(p.get("ns"))
            if ns is not None:
                out.append((case_name(*parts, p.get("label") or "plateau"), ns))
    return out


def judge_entry(out, label, code, heads, status=None):
    """Everything one suite entry reports: (result, figure, unit, reasons, sub-cases); heads
    is (headline by label, why there are none), status the outcome status.tsv records (ok,
    noisy, failed, interrupted; None in a row from before that column).

    Sub-cases are (name, result or None for the entry's own, measurement, units).
    """
    reasons = Reasons()
    figure = unit = None
    subs = []
    data, why = load_report(out / f"{label}.json")
    if code == EXIT_UNSUPPORTED:
        reasons.add("unsupported", f"not supported here (exit 3): {last_error_line(out, label)}",
                    code, "status")
    elif status == "interrupted":
        reasons.add("interrupted", f"the suite was stopped while it ran (exit {code})", code, "status")
    elif code != 0 and status != "noisy":
        # A noisy outcome measured: the tool gave up only because the run was noisy
        # (--fail-on-noise); the report's noise reasons say why.
        reasons.add("exit", f"the tool failed (exit {code}): {last_error_line(out, label)}",
                    code, "status")
    if data is None:
        if code == 0:
            reasons.add("report", why)
    elif "measurements" in data:
        head = heads[0].get(label)
        if head:
            figure, unit = number(head.get("value")), head.get("unit")
        subs = [(name, None, ns, "ns") for name, ns in plateau_cases(label, data)]
        subs += [(name, None, value, units) for name, value, units in energy_cases(label, head)]
        verdict = (data.get("quality") or {}).get("verdict") or {}
        if verdict.get("noisy"):
            why_noisy = verdict.get("reasons") or []
            text = "; ".join(why_noisy[:3]) + (f" (and {len(why_noisy) - 3} more)" if len(why_noisy) > 3 else "")
            reasons.add("noisy", f"noisy run: {text}", len(why_noisy), "reasons")
    else:
        reasons.add("report", f"{label}.json is in no layout this script knows")
    if data is not None and figure is None:
        reasons.add("report", f"no headline figure for {label}: {heads[1] or 'its report has no figures'}")
    if code == EXIT_UNSUPPORTED:
        result = "skip"
    elif not reasons:
        result = "pass"
    elif all(kind in NOISE_ONLY for kind, _, _, _ in reasons.items):
        result = "unknown"
    else:
        result = "fail"
    return result, figure, unit, reasons, subs


class Lava:
    """Sends results through LAVA's helpers, or prints them where there are none."""

    def __init__(self):
        self.helpers = shutil.which("lava-test-case") is not None
        self.failed = 0
        self.counts = {}

    def _call(self, argv):
        sys.stdout.flush()
        rc = subprocess.run(argv, check=False).returncode
        if rc != 0:
            self.failed += 1
            print(f"report.py: {argv[0]} exited with status {rc}: {' '.join(argv[1:])}", file=sys.stderr)

    def start(self, name):
        if self.helpers:
            self._call(["lava-test-set", "start", name])
        else:
            print(f"== {name}")

    def stop(self):
        if self.helpers:
            self._call(["lava-test-set", "stop"])

    def case(self, name, result, measurement=None, units=None):
        self.counts[result] = self.counts.get(result, 0) + 1
        words = [name, "--result", result]
        if measurement is not None:
            words += ["--measurement", fmt(measurement)]
            if units and unit_word(units):
                words += ["--units", unit_word(units)]
        if self.helpers:
            self._call(["lava-test-case"] + words)
        else:
            print(" ".join(w for w in words if not w.startswith("--")))

    def reference(self, name, result, url):
        self.counts[result] = self.counts.get(result, 0) + 1
        if self.helpers:
            self._call(["lava-test-reference", name, "--result", result, "--reference", url])
        else:
            print(f"{name} {result} {url}")

    @staticmethod
    def explain(name, reasons):
        """The reasons as lines in the log, just before the case they explain."""
        for _, _, _, text in reasons.items:
            print(f"socbench: {name}: {text}")

    def reason_cases(self, name, result, reasons):
        """One case per reason, NAME-reason-KIND, with the result of the case it explains."""
        for kind, measurement, units, _ in reasons.items:
            self.case(case_name(name, "reason", kind), result, measurement, units)


def report_entries(lava, out, rows, benchmp):
    heads = headlines(out, benchmp)
    by_tool = {}
    for row in rows:
        by_tool.setdefault(row["tool"], []).append(row)
    for tool, entries in by_tool.items():
        lava.start(case_name(tool))
        for row in entries:
            label = row["label"]
            try:
                code = int(row["exit"])
            except (TypeError, ValueError):
                code = 255
            result, figure, unit, reasons, subs = judge_entry(out, label, code, heads, row.get("status"))
            lava.explain(case_name(label), reasons)
            lava.case(case_name(label), result, figure, unit)
            lava.reason_cases(case_name(label), result, reasons)
            for name, sub_result, measurement, units in subs:
                lava.case(name, sub_result or result, measurement, units)
        lava.stop()


def runs_here(program):
    try:
        return subprocess.run([program, "--version"], capture_output=True, check=False).returncode == 0
    except OSError:
        return False


def report_compare(lava, out, baseline, benchmp):
    """`benchmp compare BASELINE RESULTS`: exit 0 nothing regressed, 1 something did, 2 bad
    input. The table goes to the log, the JSON to RESULTS/compare/compare.json, and each
    figure it judged becomes a case with the change in percent."""
    reasons = Reasons()
    result = "pass"
    rows = []
    if not benchmp or not runs_here(benchmp):
        result = "skip"
        reasons.add("unsupported", f"comparison skipped: no benchmp that runs here ({benchmp or 'none given'})")
    else:
        probe = subprocess.run([benchmp, "compare", "--help"], capture_output=True, text=True, check=False)
        if probe.returncode != 0:
            result = "skip"
            first = (probe.stderr.strip().splitlines() or [""])[0][:200]
            reasons.add("unsupported", f"comparison skipped: {benchmp} has no compare subcommand "
                        f"(status {probe.returncode}: {first})")
    if result == "pass":
        cmp_dir = out / "compare"
        cmp_dir.mkdir(exist_ok=True)
        js = cmp_dir / "compare.json"
        run = subprocess.run([benchmp, "compare", str(baseline), str(out), f"--json={js}"],
                             capture_output=True, text=True, check=False)
        sys.stdout.write(run.stdout)
        (cmp_dir / "compare.txt").write_text(run.stdout)
        err = (run.stderr.strip().splitlines() or [""])[-1][:200]
        if run.returncode in (0, 1):
            try:
                rows = json.loads(js.read_text()).get("rows") or []
            except (OSError, ValueError, AttributeError) as e:
                reasons.add("report", f"benchmp compare wrote no readable JSON: {e}")
        if run.returncode == 1:
            result = "fail"
            reasons.add("regression", f"something regressed against {baseline} (see the table above)")
        elif run.returncode == 2:
            result = "fail"
            reasons.add("input", f"benchmp compare refused its input: {err}", 2, "status")
        elif run.returncode != 0:
            result = "fail"
            reasons.add("exit", f"benchmp compare failed (exit {run.returncode}): {err}", run.returncode, "status")
        elif reasons:
            result = "fail"
    lava.start("compare")
    lava.explain("compare", reasons)
    lava.case("compare", result)
    lava.reason_cases("compare", result, reasons)
    seen = set()
    for row in rows:
        name = case_name("compare", row.get("entry"), row.get("figure"))
        if name in seen:
            continue
        seen.add(name)
        verdict = str(row.get("verdict")).upper()
        lava.case(name, COMPARE_RESULTS.get(verdict, "unknown"), number(row.get("change_pct")), "%")
    lava.stop()


def upload_token():
    """SOCBENCH_UPLOAD_TOKEN from the environment, or from the secrets file LAVA writes into
    the test overlay (a job's `secrets:`), found above the test's result folder."""
    token = os.environ.get("SOCBENCH_UPLOAD_TOKEN")
    if token:
        return token
    where = os.environ.get("LAVA_RESULT_DIR")
    if not where:
        return None
    for folder in pathlib.Path(where).parents:
        secrets = folder / "secrets"
        if secrets.is_file():
            for line in secrets.read_text(errors="replace").splitlines():
                key, _, value = line.partition("=")
                if key.strip() == "SOCBENCH_UPLOAD_TOKEN":
                    return value.strip().strip("'\"")
    return None


def upload(archive, url, token):
    """Posts the archive as a multipart form (the file in `path`, the token in `token`, as
    LAVA's documentation describes for a lab's artifact server) and returns the address of the
    stored file: the answer when it is one, else URL/NAME."""
    boundary = uuid.uuid4().hex
    parts = [
        f"--{boundary}\r\nContent-Disposition: form-data; name=\"path\"; filename=\"{archive.name}\"\r\n"
        "Content-Type: application/gzip\r\n\r\n".encode() + archive.read_bytes() + b"\r\n"
    ]
    if token:
        parts.append(f"--{boundary}\r\nContent-Disposition: form-data; name=\"token\"\r\n\r\n{token}\r\n".encode())
    body = b"".join(parts) + f"--{boundary}--\r\n".encode()
    request = urllib.request.Request(url, data=body, method="POST",
                                     headers={"Content-Type": f"multipart/form-data; boundary={boundary}"})
    with urllib.request.urlopen(request, timeout=300) as response:
        answer = response.read().decode(errors="replace").strip()
    if re.fullmatch(r"https?://[^\s<>]+", answer):
        return answer
    return url.rstrip("/") + "/" + archive.name


def report_archive(lava, out, url):
    archive = out.parent / f"{out.name}.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(out, arcname=out.name)
    print(f"socbench: results archive {archive}")
    reasons = Reasons()
    link = None
    if not url:
        result = "skip"
        reasons.add("no-url", f"no upload URL given: the archive stays at {archive}")
    else:
        try:
            link = upload(archive, url, upload_token())
            result = "pass"
        except (OSError, ValueError, urllib.error.URLError) as e:
            result = "fail"
            reasons.add("upload", f"uploading {archive.name} to {url} failed: {e}")
    lava.start("results")
    lava.explain("archive", reasons)
    if link:
        lava.reference("archive", result, link)
    else:
        lava.case("archive", result)
    lava.reason_cases("archive", result, reasons)
    lava.stop()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results", type=pathlib.Path)
    parser.add_argument("--baseline", type=pathlib.Path, help="results folder of an earlier run to compare with")
    parser.add_argument("--benchmp", help="the benchmp binary for the comparison")
    parser.add_argument("--upload-url", help="where to post the results archive")
    try:
        args = parser.parse_args()
    except SystemExit as e:
        return 0 if e.code == 0 else 2
    out = args.results.resolve()
    status = out / "status.tsv"
    if not status.is_file():
        print(f"report.py: {status} not found (not a suite results folder)", file=sys.stderr)
        return 2
    if args.upload_url and not re.fullmatch(r"https?://\S+", args.upload_url):
        print(f"report.py: --upload-url '{args.upload_url}' is not an http(s) URL", file=sys.stderr)
        return 2
    with status.open(newline="") as f:
        rows = [r for r in csv.DictReader(f, delimiter="\t") if r.get("label") and r.get("tool")]

    lava = Lava()
    report_entries(lava, out, rows, args.benchmp)
    if args.baseline:
        report_compare(lava, out, args.baseline.resolve(), args.benchmp)
    report_archive(lava, out, args.upload_url)
    counts = ", ".join(f"{n} {r}" for r, n in sorted(lava.counts.items()))
    print(f"socbench: {len(rows)} suite entries reported in {sum(lava.counts.values())} results ({counts})")
    return 1 if lava.failed else 0


if __name__ == "__main__":
    sys.exit(main())
