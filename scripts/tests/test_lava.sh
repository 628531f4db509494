#!/usr/bin/env bash
# Tests socbench's LAVA test definitions (scripts/lava/) with LAVA's own lava-test-shell
# helpers, taken from Debian's lava-dispatcher package (scripts/lib/setup.sh):
#   - the definitions and the example jobs hold what LAVA requires of them;
#   - each definition's steps, run as LAVA runs them (its params as shell variables, the job's
#     parameters over them, then sh -e), print one test case per suite entry inside a test
#     set per tool, with the result, measurement and units the entry's JSON report calls for
#     (a stand-in binary that exits 1 makes a fail with its reason), the comparison with a
#     baseline, and the results archive uploaded and referenced;
#   - the Android definition does the same through scripts/android.sh and a stand-in adb whose
#     "device" is this machine, from an archive of the binaries, on one CPU;
#   - a clean report is all pass; a noisy report is unknown with its reasons, never a fail;
#   - a bad parameter (a plan, a tool, a SCHED policy, a CPU this test may not use, a binary
#     folder) is one line, status 2 and a LAVA test error, and leaves no folder behind;
#   - a signal stops the running suite and its tool before socbench.sh exits 128+n;
#   - the definition's steps run under busybox sh with nothing but busybox's applets on PATH:
#     no bash and no python3 (stand-ins of both would say so), as on a minimal LAVA image.
# Correctness only: no figure is judged. Uses the quick plan and the fast tools. KEEP=1 keeps
# its folders (logs, results) for a look afterwards. SOCBENCH_BIN names a folder of release
# binaries to use instead of building them.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
# shellcheck source=scripts/lib/setup.sh
. "$top/scripts/lib/setup.sh"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/socbench lava.XXXXXX")  # a space in every path
# and a second folder for the results of the Linux runs.
outs=$(mktemp -d "${TMPDIR:-/tmp}/socbench-lava.XXXXXX")
server_pid=""
cleanup() {
  [ -z "$server_pid" ] || kill "$server_pid" 2>/dev/null || true
  [ -n "${KEEP:-}" ] || rm -rf "$tmp" "$outs"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

echo "== set-up: LAVA's helpers, PyYAML, shellcheck, busybox, release binaries"
setup_lava_helpers "$tmp/lava-bin" || fail "no LAVA helpers (see the setup line above)"
setup_apt shellcheck shellcheck busybox busybox-static || fail "no shellcheck or busybox (see the setup line above)"
python3 -c 'import yaml' 2>/dev/null || setup_python_packages || fail "no PyYAML (see the setup line above)"
if [ -n "${SOCBENCH_BIN:-}" ]; then
  release=$(cd "$SOCBENCH_BIN" && pwd)
else
  (cd "$top" && cargo build --release --quiet -p bw_mem -p lat_mem_rd -p dhry -p dto -p benchmp-cli) \
    || fail "release build failed"
  release="${CARGO_TARGET_DIR:-$top/target}/release"
fi
export PATH="$tmp/lava-bin:$PATH"
# LAVA's layout: the job's overlay holds `secrets`, each test run a result folder below it.
mkdir -p "$tmp/lava-1/0/results"
export LAVA_RESULT_DIR="$tmp/lava-1/0/results/0_socbench-1"
printf 'SOCBENCH_UPLOAD_TOKEN=t0ken\n' > "$tmp/lava-1/secrets"

echo "== lint: scripts/lava is POSIX sh (shellcheck -s sh)"
shellcheck -s sh -x "$top"/scripts/lava/*.sh "$top"/scripts/lava/devices/*-init \
  || fail "shellcheck -s sh found problems in scripts/lava"

echo "== device.sh: bad options are refused before anything is installed or run"
# device_refuses LINE ARGS...: scripts/device.sh ARGS exits 2 with the one line LINE.
device_refuses() {
  local want=$1 rc=0 err
  shift
  err=$("$top/scripts/device.sh" "$@" 2>&1 >/dev/null) || rc=$?
  if [ "$rc" -ne 2 ] || [ "$err" != "$want" ]; then
    fail "device.sh $*: exit $rc, '$err' (want 2, '$want')"
  fi
}
device_refuses "device.sh: unknown option '--bogus' (see --help)" --bogus
device_refuses "device.sh: --setup takes no --out or --bin-dir (it runs nothing)" --setup --out "$tmp/device-out"
device_refuses "device.sh: --profile 'fast' is not scripts or release" --profile fast
[ ! -e "$tmp/device-out" ] || fail "device.sh --setup --out made its folder"

echo "== the definitions and example jobs hold what LAVA requires"
python3 - "$top" <<'PY'
import os, pathlib, re, sys, yaml
top = pathlib.Path(sys.argv[1])
lava = top / "scripts/lava"
name_class = re.compile(r"^[-_a-zA-Z0-9.]+$")  # LAVA's test definition name class
def need(ok, what):
    if not ok:
        sys.exit(f"FAIL: {what}")
def str_list(x):
    return isinstance(x, list) and x and all(isinstance(i, str) and i for i in x)
defs = {}
for path in sorted(lava.glob("*.yaml")):
    d = yaml.safe_load(path.read_text())
    m = d.get("metadata") or {}
    need(m.get("format") == "Lava-Test Test Definition 1.0", f"{path.name}: metadata.format")
    need(isinstance(m.get("name"), str) and name_class.match(m["name"]) and m["name"] == path.stem,
         f"{path.name}: metadata.name must be the file's stem, without special characters")
    need(isinstance(m.get("description"), str) and m["description"].strip(), f"{path.name}: metadata.description")
    for key in ("os", "devices", "scope", "maintainer"):
        need(str_list(m.get(key)), f"{path.name}: metadata.{key} must be a list of strings")
    params = d.get("params")
    need(isinstance(params, dict) and params, f"{path.name}: params must be a mapping")
    need(all(isinstance(v, (str, int, float)) for v in params.values()), f"{path.name}: params must be scalars")
    need(not any("'" in str(v) for v in params.values()), f"{path.name}: LAVA quotes params with ' and cannot hold one")
    steps = (d.get("run") or {}).get("steps")
    need(str_list(steps), f"{path.name}: run.steps must be a list of strings (a ': ' in a step makes a mapping)")
    used = set(re.findall(r"\$\{(\w+)\}", " ".join(steps)))
    need(used == set(params), f"{path.name}: params {sorted(set(params))} and the ones the steps use {sorted(used)} differ")
    need(steps[0] == "cd ./scripts/lava", f"{path.name}: the first step goes to scripts/lava from the checkout")
    if "android" not in path.name:  # a device's own steps: POSIX sh, no bash, no Python
        need(not re.search(r"\b(bash|python3?)\b", " ".join(steps)), f"{path.name}: a step calls bash or python")
        for script in re.findall(r"\./(\S+\.sh)", " ".join(steps)):
            first = (lava / script).read_text().splitlines()[0]
            need(first == "#!/bin/sh", f"{path.name}: {script} starts {first!r}, not #!/bin/sh")
            need(os.access(lava / script, os.X_OK), f"{path.name}: {script} is not executable (LAVA runs ./{script})")
    need(set(d) <= {"metadata", "params", "run", "install", "parse"}, f"{path.name}: unknown top-level keys")
    defs[f"scripts/lava/{path.name}"] = d
need(set(defs) == {"scripts/lava/socbench.yaml", "scripts/lava/socbench-android.yaml", "scripts/lava/socbench-soc.yaml"}, f"definitions: {sorted(defs)}")
for path in sorted((lava / "jobs").glob("*.yaml")):
    j = yaml.safe_load(path.read_text())
    for key in ("device_type", "job_name", "timeouts", "priority", "visibility", "actions"):
        need(key in j, f"jobs/{path.name}: no {key}")
    kinds = [next(iter(a)) for a in j["actions"]]
    need({"deploy", "boot", "test"} <= set(kinds), f"jobs/{path.name}: actions {kinds}")
    for a in j["actions"]:
        for t in (a.get("test") or {}).get("definitions") or []:
            need(t.get("from") == "git" and t.get("repository"), f"jobs/{path.name}: definitions come from git")
            need(t.get("path") in defs, f"jobs/{path.name}: {t.get('path')} is not a definition here")
            need(name_class.match(t.get("name", "")), f"jobs/{path.name}: test name {t.get('name')}")
            extra = set(t.get("parameters") or {}) - set(defs[t["path"]]["params"])
            need(not extra, f"jobs/{path.name}: parameters the definition does not take: {sorted(extra)}")
print("definitions and jobs: ok")
PY

# lava_script DEFINITION FILE VAR=VALUE...: writes FILE as LAVA writes a definition's run
# script (the definition's params, the job's parameters, set -e, the checkout, the steps).
lava_script() {
  local def=$1 file=$2; shift 2
  python3 - "$top/scripts/lava/$def" "$top" "$file" "$@" <<'PY'
import shlex, sys, yaml
d = yaml.safe_load(open(sys.argv[1]))
lines = [f"{k}='{'' if v is None else v}'" for k, v in d["params"].items()]
lines += [f"{k}='{v}'" for k, v in (a.split("=", 1) for a in sys.argv[4:])]
lines += ["set -e", f"cd {shlex.quote(sys.argv[2])}"] + d["run"]["steps"]
open(sys.argv[3], "w").write("\n".join(lines) + "\n")
PY
}
# lava_run DEFINITION LOG VAR=VALUE...: the definition's run script, run with sh -e.
lava_run() {
  local def=$1 log=$2; shift 2
  lava_script "$def" "$tmp/run.sh" "$@"
  sh -e "$tmp/run.sh" > "$log" 2>&1
}

# check_signals LOG RESULTS [EXPECT...]: the signals in LOG against RESULTS' status.tsv and
# JSON reports. EXPECT: fail:LABEL (a stand-in that exits 1), archive (an uploaded archive),
# compare (a comparison), cpus:N (every benchmp report ran on CPU N only).
check_signals() {
  BENCHMP="$release/benchmp" python3 - "$@" <<'PY'
import csv, decimal, json, math, os, pathlib, re, subprocess, sys
log, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
expect = sys.argv[3:]
def need(ok, what):
    if not ok:
        sys.exit(f"FAIL: {what}\n--- log:\n{log.read_text()[-3000:]}")
cases, refs, sets, current = {}, {}, [], None
for name, params in re.findall(r"<LAVA_SIGNAL_(\w+) ([^>]*)>", log.read_text()):
    words = params.split()
    if name == "TESTSET":
        if words[0] == "START":
            need(current is None, f"test set {words[1]} starts inside {current}")
            current = words[1]
            sets.append(current)
        else:
            need(current is not None, "a test set stops that never started")
            current = None
    elif name == "TESTCASE":
        kv = dict(w.split("=", 1) for w in words)  # LAVA refuses a word that is not KEY=VALUE
        need(all(w.count("=") == 1 for w in words), f"malformed test case signal: {params}")
        cid = kv["TEST_CASE_ID"]
        need(cid not in cases, f"test case {cid} reported twice")
        need(kv.get("RESULT") in ("pass", "fail", "skip", "unknown"), f"{cid}: result {kv.get('RESULT')}")
        if "MEASUREMENT" in kv:
            decimal.Decimal(kv["MEASUREMENT"])  # LAVA's own check
        kv["set"] = current
        cases[cid] = kv
    elif name == "TESTREFERENCE":
        need(len(words) == 3, f"reference signal with {len(words)} words: {params}")
        refs[words[0]] = words[1:] + [current]
    elif name == "TESTRAISE":
        need(False, f"a LAVA test error was raised: {params}")
need(current is None, "a test set was left open")

def close(a, b):
    return abs(a - b) <= 1e-6 * max(1.0, abs(b))
# The headline figures as benchmp's one rule gives them: the report's measurements must be these.
summary = subprocess.run([os.environ["BENCHMP"], "summary", "--json", str(out)], capture_output=True, text=True)
need(summary.returncode == 0, f"benchmp summary --json {out}: {summary.stderr}")
heads = {e["entry"]: e["headline"] for e in json.loads(summary.stdout)["entries"]}
rows = list(csv.DictReader(open(out / "status.tsv"), delimiter="\t"))
need(rows, "status.tsv lists no entry")
stand_ins = {e.split(":", 1)[1] for e in expect if e.startswith("fail:")}
passed = 0
for r in rows:
    label, tool, code = r["label"], r["tool"], int(r["exit"])
    c = cases.get(label)
    need(c, f"no test case for the suite entry {label}")
    need(c["set"] == tool, f"{label} is in test set {c['set']}, not {tool}")
    if label in stand_ins:
        need(code == 1 and c["RESULT"] == "fail", f"{label}: the stand-in's exit 1 must be a fail: {c}")
        reason = cases.get(f"{label}-reason-exit") or {}
        need(reason.get("RESULT") == "fail" and reason.get("MEASUREMENT") == "1", f"{label}: no exit reason: {reason}")
        continue
    # A parallel entry whose children another task kept apart is refused by its tool (exit 1,
    # the documented outcome on a busy machine): unknown, with its reason, never a fail.
    err = (out / f"{label}.err").read_text() if (out / f"{label}.err").exists() else ""
    # (A tool whose first measurement was written before a later one was refused so has a
    # report too: its reason is then the report's noise.)
    if code == 1 and "the children did not run together" in err:
        reasons = {k: v for k, v in cases.items()
                   if k in (f"{label}-reason-apart", f"{label}-reason-noisy")}
        need(c["RESULT"] == "unknown" and reasons and all(v["RESULT"] == "unknown" for v in reasons.values()),
             f"{label}: children that ran apart must be unknown with its reason: {c}, {reasons}")
        continue
    need(code == 0, f"{label} failed (exit {code}); see {label}.err")
    data = json.load(open(out / f"{label}.json"))
    head = heads.get(label)
    need(head, f"{label}: benchmp summary gives no headline figure")
    want, unit = head["value"], head["unit"]
    noisy, failed = data["quality"]["verdict"]["noisy"], False
    for s in (data.get("extra") or {}).get("summary") or []:
        for p in s["shape"]["plateaus"]:
            name = re.sub(r"[^A-Za-z0-9._-]+", "-", f"{label}-{p['label']}").strip("-")
            pc = cases.get(name)
            need(pc and close(float(pc["MEASUREMENT"]), p["ns"]) and pc["UNITS"] == "ns",
                 f"{name}: plateau case {pc} for {p}")
    for e in expect:
        if e.startswith("cpus:"):
            need(data["placement"]["policy"] == f"cpus {e[5:]}", f"{label}: placement {data['placement']}")
    need("MEASUREMENT" in c and close(float(c["MEASUREMENT"]), want), f"{label}: measurement {c.get('MEASUREMENT')}, JSON {want}")
    need(c.get("UNITS") == unit.replace(" ", "_"), f"{label}: units {c.get('UNITS')}, JSON {unit}")
    # The result follows the report: unknown when it calls the run noisy (the tool worked, the
    # figure is shaky), fail only for a regression.
    want_result = "fail" if failed else "unknown" if noisy else "pass"
    need(c["RESULT"] == want_result, f"{label}: {c['RESULT']} but noisy={noisy}, regressed={failed}")
    if noisy or failed:
        need(any(k.startswith(f"{label}-reason-") and v["RESULT"] == want_result for k, v in cases.items()),
             f"{label}: a {want_result} without a reason case")
    passed += c["RESULT"] == "pass"
need(sets[-1] == "results", f"the archive's test set comes last: {sets}")
if "archive" in expect:
    need(refs.get("archive", [None])[0] == "pass", f"no archive reference: {refs}")
if "compare" in expect:
    cmp = cases.get("compare") or {}
    need(cmp.get("set") == "compare", f"no compare case: {cmp}")
    need(cmp.get("RESULT") in ("pass", "fail", "skip"), f"compare: {cmp}")
    if cmp["RESULT"] == "skip":
        need(cases.get("compare-reason-unsupported", {}).get("RESULT") == "skip", "compare skipped without its reason")
    else:  # one case per figure benchmp compare judged, from its JSON
        cmp_rows = json.load(open(out / "compare" / "compare.json"))["rows"]
        mapping = {"PASS": "pass", "IMPROVED": "pass", "FAIL": "fail", "NOISY": "unknown", "MISSING": "skip"}
        for row in cmp_rows:
            name = re.sub(r"[^A-Za-z0-9._-]+", "-", f"compare-{row['entry']}-{row['figure']}").strip("-")
            rc = cases.get(name)
            need(rc and rc["RESULT"] == mapping[row["verdict"]] and rc["set"] == "compare", f"{name}: {rc} for {row}")
            if row["change_pct"] is not None:
                need(close(float(rc["MEASUREMENT"]), row["change_pct"]) and rc["UNITS"] == "%", f"{name}: {rc}")
        regressed = any(row["verdict"] == "FAIL" for row in cmp_rows)
        need(cmp["RESULT"] == ("fail" if regressed else "pass"), f"compare is {cmp['RESULT']}, regressed={regressed}")
print(f"   {len(rows)} entries, {len(cases)} test cases; {passed} entries passed, the others are "
      "unknown as their JSON reports call for (noise on this machine) or stand-ins")
PY
}

echo "== a Linux device: bw_mem, dto and a stand-in dhry that exits 1; the archive uploaded"
mkdir -p "$tmp/bin-a" "$tmp/store"
for t in bw_mem dto benchmp; do ln -s "$release/$t" "$tmp/bin-a/$t"; done
# shellcheck disable=SC2016  # the stand-in expands $1 itself
printf '#!/bin/sh\n[ "$1" = --version ] && { echo "dhry stand-in"; exit 0; }\necho "dhry: error: stand-in failure" >&2\nexit 1\n' \
  > "$tmp/bin-a/dhry"
chmod +x "$tmp/bin-a/dhry"
# An artifact server as LAVA's documentation describes one: a multipart POST with the file in
# `path` and the token in `token`, answered with the stored file's address.
python3 - "$tmp/store" <<'PY' &
import http.server, pathlib, re, sys
store = pathlib.Path(sys.argv[1])
class Handler(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        boundary = re.search(r"boundary=(\S+)", self.headers["Content-Type"]).group(1).encode()
        fields = {}
        for part in body.split(b"--" + boundary)[1:-1]:
            head, _, value = part[2:-2].partition(b"\r\n\r\n")
            name = re.search(rb'name="([^"]+)"', head).group(1).decode()
            filename = re.search(rb'filename="([^"]+)"', head)
            fields[name] = (filename.group(1).decode() if filename else None, value)
        if fields.get("token", (None, b""))[1] != b"t0ken":
            self.send_response(403); self.end_headers(); return
        name, data = fields["path"]
        (store / name).write_bytes(data)
        self.send_response(200); self.end_headers()
        self.wfile.write(f"http://127.0.0.1:{self.server.server_port}/files/{name}\n".encode())
    def log_message(self, *args):
        pass
server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
(store / "port").write_text(str(server.server_port))
server.serve_forever()
PY
server_pid=$!
for _ in $(seq 50); do [ -s "$tmp/store/port" ] && break; sleep 0.1; done
[ -s "$tmp/store/port" ] || fail "the stand-in artifact server did not start"
port=$(cat "$tmp/store/port")
lava_run socbench.yaml "$tmp/a.log" PLAN=quick "TOOLS=bw_mem dhry dto" BIN_DIR="$tmp/bin-a" \
  OUT="$outs/out-a" UPLOAD_URL="http://127.0.0.1:$port/upload/" QUIET_WAIT=1 RERUN=no \
  || fail "the definition's steps failed: $(tail -n 20 "$tmp/a.log")"
grep -q '^== socbench: plan quick, tools bw_mem dhry dto, quiet wait 1 s, rerun no;' "$tmp/a.log" \
  || fail "QUIET_WAIT and RERUN are not said: $(grep '^== socbench' "$tmp/a.log")"
if grep -q 'again: it was noisy' "$tmp/a.log"; then fail "RERUN=no ran an entry again"; fi
check_signals "$tmp/a.log" "$outs/out-a" fail:dhry-P1 archive
grep -q "<LAVA_SIGNAL_TESTREFERENCE archive pass http://127.0.0.1:$port/files/out-a.tar.gz>" "$tmp/a.log" \
  || fail "the archive's reference is not the server's answer"
listing=$(tar -tzf "$tmp/store/out-a.tar.gz")
grep -qx 'out-a/status.tsv' <<< "$listing" || fail "the uploaded archive has no status.tsv"
grep -qx 'out-a/bw_mem-rd-P1.json' <<< "$listing" || fail "the uploaded archive has no JSON reports"
grep -q '^socbench: dhry-P1: the tool failed (exit 1): dhry: error: stand-in failure' "$tmp/a.log" \
  || fail "the log does not give the stand-in's reason"

echo "== an Android device over a stand-in adb: binaries from an archive, CPU 0, a baseline"
mkdir -p "$tmp/bin-b" "$tmp/adb-bin"
tar -czhf "$tmp/socbench-bin.tar.gz" -C "$release" bw_mem lat_mem_rd dhry dto benchmp
# shellcheck disable=SC2016  # the stand-in getprop expands $1 itself
printf '#!/bin/sh\n[ "$1" = ro.product.model ] && echo "Fake Phone 8"\n' > "$tmp/adb-bin/getprop"
chmod +x "$tmp/adb-bin/getprop"
echo emulator-5554 > "$tmp/devices"
: > "$tmp/adb.log"; : > "$tmp/argv.log"
ADB="$here/fake-adb" FAKE_ADB_LOG="$tmp/adb.log" FAKE_ADB_DEVICES="$tmp/devices" FAKE_ADB_ARGV_LOG="$tmp/argv.log" \
  FAKE_ADB_BIN="$tmp/adb-bin" ANDROID_SERIAL=emulator-5554 \
  lava_run socbench-android.yaml "$tmp/b.log" PLAN=quick "TOOLS=bw_mem dto" CPUS=0 \
  DEVICE_DIR="$tmp/dev ice/socbench" BIN_DIR="$tmp/socbench-bin.tar.gz" BASELINE="$outs/out-a.tar.gz" BENCHMP="$release/benchmp" OUT="$tmp/out-b" \
  QUIET_WAIT=0 RERUN=no \
  || fail "the Android definition's steps failed: $(tail -n 20 "$tmp/b.log")"
suite_argv=$(tr '\0' ' ' < "$tmp/argv.log" | grep -m1 -E '(^| )suite( |$)' || true)
if ! grep -qE -- '(^| )--quiet-wait[= ]0( |$)' <<< "$suite_argv" \
  || ! grep -qE -- '(^| )--no-rerun( |$)' <<< "$suite_argv"; then
  fail "QUIET_WAIT and RERUN did not reach the device's suite: $suite_argv"
fi
check_signals "$tmp/b.log" "$tmp/out-b" cpus:0 compare
grep -q 'P2' "$tmp/out-b/status.tsv" && fail "CPUS=0 ran two-child entries: $(cut -f1 "$tmp/out-b/status.tsv" | tr '\n' ' ')"
grep -q '^model: Fake Phone 8' "$tmp/out-b/device.txt" || fail "the run did not go through android.sh"

echo "== a clean report is all pass; a tool unsupported here is a skip"
cp -r "$outs/out-a" "$tmp/clean"
rm -f "$tmp/clean.tar.gz"
python3 - "$tmp/clean" <<'PY'
import json, pathlib, sys
out = pathlib.Path(sys.argv[1])
for f in out.glob("*.json"):
    d = json.loads(f.read_text())
    if "quality" in d:
        d["quality"]["verdict"] = {"noisy": False, "reasons": []}
    f.write_text(json.dumps(d))
rows = (out / "status.tsv").read_text().splitlines()
rows = [r.replace("dhry-P1\tdhry\t1", "dhry-P1\tdhry\t3") for r in rows]
(out / "status.tsv").write_text("\n".join(rows) + "\n")
PY
sh "$top/scripts/lava/report.sh" "$tmp/clean" --benchmp "$release/benchmp" > "$tmp/c.log" || fail "report.sh failed on a clean folder"
python3 - "$tmp/c.log" "$tmp/clean" <<'PY'
import csv, re, sys
text = open(sys.argv[1]).read()
results = dict(re.findall(r"<LAVA_SIGNAL_TESTCASE TEST_CASE_ID=(\S+) RESULT=(\w+)", text))
apart = set()
for r in csv.DictReader(open(sys.argv[2] + "/status.tsv"), delimiter="\t"):
    want = "skip" if r["exit"] == "3" else "pass"
    # On a busy machine an entry whose children ran apart in every attempt is refused (exit
    # 1), the suite's rerun included: unknown with that reason, never a fail (documented).
    if r["exit"] == "1" and results.get(r["label"] + "-reason-apart") == "unknown":
        want = "unknown"
        apart |= {r["label"], r["label"] + "-reason-apart"}
    if results.get(r["label"]) != want:
        sys.exit(f"FAIL: {r['label']}: {results.get(r['label'])}, expected {want}\n{text}")
others = {k: v for k, v in results.items() if v not in ("pass", "skip") and k not in apart}
if others:
    sys.exit(f"FAIL: a clean report has non-pass cases: {others}")
PY
grep -q 'TEST_CASE_ID=dhry-P1-reason-unsupported RESULT=skip' "$tmp/c.log" || fail "exit 3 without its skip reason"
plain=$(PATH="/usr/bin:/bin" sh "$top/scripts/lava/report.sh" "$tmp/clean" --benchmp "$release/benchmp") || fail "report.sh without LAVA's helpers failed"
grep -qE '^bw_mem-rd-P1 pass [0-9.]+ MB/s$' <<< "$plain" || fail "without LAVA's helpers, no plain result lines: $plain"

echo "== --archive-to-log: the results archive in the log, base64 between its markers"
rm -f "$tmp/clean.tar.gz"
sh "$top/scripts/lava/report.sh" "$tmp/clean" --benchmp "$release/benchmp" --archive-to-log > "$tmp/l.log" \
  || fail "report.sh --archive-to-log failed"
sed -n '/^socbench-archive-begin clean.tar.gz$/,/^socbench-archive-end clean.tar.gz$/p' "$tmp/l.log" \
  | sed '1d;$d' | base64 -d > "$tmp/from-log.tar.gz" || fail "the archive in the log is not base64"
tar -tzf "$tmp/from-log.tar.gz" > "$tmp/from-log.list" || fail "the archive in the log does not unpack"
grep -qx 'clean/status.tsv' "$tmp/from-log.list" || fail "the archive in the log holds no clean/status.tsv"
grep -q 'TEST_CASE_ID=archive RESULT=pass' "$tmp/l.log" || fail "an archive in the log is not a pass: $(grep archive "$tmp/l.log")"

echo "== a report with a power record gives its energy and figure per energy, with units"
cp -r "$tmp/clean" "$tmp/power"
python3 - "$tmp/power" <<'PY'
import json, pathlib, sys
out = pathlib.Path(sys.argv[1])
f = out / "bw_mem-rd-P1.json"
d = json.loads(f.read_text())
d["measurements"][0]["power"] = {
    "window_ns": [1, 2],
    "sources": [{"name": "battery:battery", "kind": "power_supply", "covers": "whole device (battery)",
                 "from": "samples", "samples": 40, "period_ms": 100.0, "energy_j": 3.5, "mean_w": 3.0,
                 "peak_w": 4.0, "baseline_w": 0.5, "net_energy_j": 2.5, "net_mean_w": 2.5}],
    "per_energy": {"value": 1234.5, "unit": "MB/J"},
}
f.write_text(json.dumps(d))
PY
# The folder's summary.json is the suite's: made again, as benchmp suite would have made it.
"$release/benchmp" summary --json "$tmp/power" > "$tmp/power.summary" \
  || fail "benchmp summary --json of the folder with a power record failed"
mv "$tmp/power.summary" "$tmp/power/summary.json"
sh "$top/scripts/lava/report.sh" "$tmp/power" --benchmp "$release/benchmp" > "$tmp/p.log" || fail "report.sh failed on a folder with a power record"
for want in "bw_mem-rd-P1-energy RESULT=pass UNITS=J MEASUREMENT=2.5>" \
  "bw_mem-rd-P1-per-energy RESULT=pass UNITS=MB/J MEASUREMENT=1234.5>"; do
  grep -qF "<LAVA_SIGNAL_TESTCASE TEST_CASE_ID=$want" "$tmp/p.log" \
    || fail "a report with a power record: no '$want' case: $(grep -F "bw_mem-rd-P1" "$tmp/p.log")"
done
if grep -q 'TEST_CASE_ID=bw_mem-wr-P1-energy' "$tmp/p.log"; then fail "an energy case for a report without a power record"; fi

echo "== a noisy report is unknown with its reasons; a tool that failed stays a fail"
cp -r "$tmp/clean" "$tmp/noisy"
python3 - "$tmp/noisy" <<'PY'
import json, pathlib, sys
out = pathlib.Path(sys.argv[1])
f = out / "bw_mem-rd-P1.json"
d = json.loads(f.read_text())
d["quality"]["verdict"] = {"noisy": True, "reasons": ["child 0 (CPU 0): lost 70.2 % of its timed run to other tasks"]}
f.write_text(json.dumps(d))
rows = (out / "status.tsv").read_text().replace("dhry-P1\tdhry\t3", "dhry-P1\tdhry\t1")
(out / "status.tsv").write_text(rows)
PY
sh "$top/scripts/lava/report.sh" "$tmp/noisy" --benchmp "$release/benchmp" > "$tmp/n.log" || fail "report.sh failed on a noisy folder"
for want in "bw_mem-rd-P1 RESULT=unknown" "bw_mem-rd-P1-reason-noisy RESULT=unknown UNITS=reasons MEASUREMENT=1>" \
  "bw_mem-wr-P1 RESULT=pass" "dhry-P1 RESULT=fail" "dhry-P1-reason-exit RESULT=fail"; do
  grep -qF "<LAVA_SIGNAL_TESTCASE TEST_CASE_ID=$want" "$tmp/n.log" \
    || fail "a noisy report: no '$want' case: $(grep -F "${want%% *}" "$tmp/n.log")"
done
grep -qF 'socbench: bw_mem-rd-P1: noisy run: child 0 (CPU 0): lost 70.2 % of its timed run' "$tmp/n.log" \
  || fail "a noisy report: the log does not give the noise reason"

echo "== a bad parameter: one line, status 2 and a LAVA test error, before anything runs"
if lava_run socbench.yaml "$tmp/d.log" PLAN=fast OUT="$tmp/out-d"; then fail "PLAN=fast accepted"; fi
grep -q "^socbench.sh: --plan 'fast' is not quick, default or full$" "$tmp/d.log" || fail "no clear line: $(cat "$tmp/d.log")"
grep -q '<LAVA_SIGNAL_TESTRAISE socbench.sh: --plan' "$tmp/d.log" || fail "no LAVA test error: $(cat "$tmp/d.log")"
[ ! -e "$tmp/out-d" ] || fail "a results folder was made for a bad parameter"
rc=0; "$top/scripts/lava/socbench.sh" --tools "bw_mem nosuch" --out "$outs/out-e" >/dev/null 2>&1 || rc=$?
[ "$rc" -eq 2 ] || fail "an unknown tool: expected status 2, got $rc"
if [ -e "$outs/out-e" ]; then fail "a results folder was made for bad options"; fi
# bad_param WHAT PATTERN ARGS...: socbench.sh ARGS, run from an empty folder without --out,
# exits 2 with one line matching PATTERN and a LAVA test error, and leaves that folder empty.
bad_param() {
  local what=$1 pattern=$2 rc=0 err lines
  shift 2
  rm -rf "$outs/cwd"; mkdir -p "$outs/cwd"
  err=$(cd "$outs/cwd" && "$top/scripts/lava/socbench.sh" --plan quick --tools dhry "$@" 2>&1 >/dev/null) || rc=$?
  lines=$(grep -v '^<LAVA_SIGNAL_' <<< "$err" || true)
  [ "$rc" -eq 2 ] || fail "$what: expected status 2, got $rc: $err"
  if [ "$(printf '%s\n' "$lines" | wc -l)" -ne 1 ] || ! grep -qE -- "^socbench.sh: $pattern" <<< "$lines"; then
    fail "$what: not one line matching '$pattern': $err"
  fi
  grep -q '^<LAVA_SIGNAL_TESTRAISE socbench.sh: ' <<< "$err" || fail "$what: no LAVA test error: $err"
  [ -z "$(ls -A "$outs/cwd")" ] || fail "$what: left $(ls -A "$outs/cwd") behind"
}
bad_param "SCHED=garbage" "--sched 'garbage' is not an LMBENCH_SCHED policy" --bin-dir "$release" --sched garbage
bad_param "SCHED=CUSTOM without CPUs" "--sched 'CUSTOM' is not" --bin-dir "$release" --sched CUSTOM
bad_param "CPUS=4095" "--cpus 4095: CPU 4095 is not one this test may run on" --bin-dir "$release" --cpus 4095
bad_param "a missing binary folder" ".*/nonexistent is not a folder" --bin-dir "$outs/nonexistent"
bad_param "QUIET_WAIT=soon" "--quiet-wait 'soon' is not a number of seconds" --bin-dir "$release" --quiet-wait soon
bad_param "RERUN=maybe" "--rerun 'maybe' is not yes or no" --bin-dir "$release" --rerun maybe

echo "== a signal stops the running suite and its tool, then exit 128+n"
mkdir -p "$tmp/bin-s"
ln -s "$release/benchmp" "$tmp/bin-s/benchmp"
# shellcheck disable=SC2016  # the stand-in expands $1 and $$ itself
printf '#!/bin/sh\n[ "$1" = --version ] && exit 0\necho $$ > "%s/stand-in.pid"\nexec sleep 600\n' "$outs" > "$tmp/bin-s/dhry"
chmod +x "$tmp/bin-s/dhry"
"$top/scripts/lava/socbench.sh" --plan quick --tools dhry --bin-dir "$tmp/bin-s" --out "$outs/out-s" > "$outs/s.log" 2>&1 &
pid=$!
for _ in $(seq 600); do [ -s "$outs/stand-in.pid" ] && break; kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
[ -s "$outs/stand-in.pid" ] || fail "the stand-in tool never ran: $(cat "$outs/s.log")"
kill -TERM "$pid"
for _ in $(seq 600); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
rc=0; wait "$pid" || rc=$?
[ "$rc" -eq 143 ] || fail "SIGTERM: expected status 143, got $rc: $(cat "$outs/s.log")"
if kill -0 "$(cat "$outs/stand-in.pid")" 2>/dev/null; then
  kill -KILL "$(cat "$outs/stand-in.pid")"
  fail "SIGTERM: the suite's tool still runs"
fi
grep -qx 'socbench.sh: interrupted by SIGTERM' "$outs/s.log" || fail "SIGTERM: no line says so: $(cat "$outs/s.log")"

echo "== under busybox sh: no bash, no python3, only busybox's applets on PATH"
mkdir -p "$tmp/bb"
busybox --install -s "$tmp/bb" 2>/dev/null || fail "busybox --install failed"
rm -f "$tmp/bb/bash" "$tmp/bb/python3"
# Stand-ins that would say so if anything reached for bash or python3 after all.
mkdir -p "$tmp/bb-stand-ins"
for p in bash python3 python; do
  # shellcheck disable=SC2016  # the stand-in expands $0 itself
  printf '#!/bin/sh\necho "$0 was called" >> "%s/called"\nexit 127\n' "$outs" > "$tmp/bb-stand-ins/$p"
  chmod +x "$tmp/bb-stand-ins/$p"
done
lava_script socbench.yaml "$tmp/run-bb.sh" PLAN=quick "TOOLS=bw_mem dhry" BIN_DIR="$release" OUT="$outs/out-bb"
# The steps' `./socbench.sh` would start /bin/sh (dash here): busybox's sh runs it instead.
sed -i 's|^\./socbench\.sh |busybox sh ./socbench.sh |' "$tmp/run-bb.sh"
grep -q '^busybox sh ./socbench.sh ' "$tmp/run-bb.sh" || fail "the definition's step is not ./socbench.sh: $(cat "$tmp/run-bb.sh")"
bb=$(command -v busybox)
env -i HOME="$HOME" PATH="$tmp/lava-bin:$tmp/bb:$tmp/bb-stand-ins" LAVA_RESULT_DIR="$LAVA_RESULT_DIR" \
  "$bb" sh -e "$tmp/run-bb.sh" > "$tmp/bb.log" 2>&1 || fail "the definition under busybox sh failed: $(tail -n 20 "$tmp/bb.log")"
[ ! -e "$outs/called" ] || fail "bash or python3 was called under busybox sh: $(cat "$outs/called")"
check_signals "$tmp/bb.log" "$outs/out-bb"

echo "PASS test_lava.sh"
