# bench/ab-sim.py - the driver of bench/ab-sim.sh (run that): writes
# synthetic results files of two builds and judges them with the real
# `ff-bench compare --json --base A --new B`, so the figures are those of
# the C statistics and verdict (stats.c, compare.c), not of this script.
import json, os, random, subprocess, sys, tempfile

ffbench, tables, runs, cases, cv, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), \
    int(sys.argv[4]), float(sys.argv[5]) / 100, int(sys.argv[6])
shifts = [float(s) / 100 for s in sys.argv[7].split(",")]
rng = random.Random(seed)
env = {"hostname": "sim", "kernel": "6.1.0", "cpu_model": "sim", "os": "sim",
       "cpus_online": 8, "cpus_available": 8}
seq = 0

def records(label, shift):
    """One build's runs of every case: throughput and operations slower by
    shift, relay CPU the same (so CPU per GB and per 1k requests grow)."""
    global seq
    out = []
    for c in range(cases):
        for r in range(runs):
            seq += 1
            bits = 1e10 * (1 - shift) * rng.gauss(1, cv)
            ops = 1e4 * (1 - shift) * rng.gauss(1, cv)
            cpu = 0.9 * rng.gauss(1, cv)
            out.append(json.dumps({
                "event": "case", "schema": 1, "tool": "ff-bench", "version": "0.1.0",
                "time": "2026-01-01T00:00:00Z", "status": "ok", "reason": None,
                "config": {"workload": "case%02d" % c, "relay": "nginx", "protocol": "tcp",
                           "jobs": 2, "warmup_s": 5, "duration_s": 5, "cpu_limit": 1},
                "repeat": r + 1, "run_dir": "/sim/%d" % seq,
                "result": {"bits_per_s": bits, "ops_per_s": ops, "latency_avg_us": None},
                "resources": {"relays": [
                    {"role": "r1", "cpu_fraction": cpu / 2, "max_rss_bytes": 1},
                    {"role": "r2", "cpu_fraction": cpu / 2, "max_rss_bytes": 1}]},
                "environment": env,
                "build": {"label": label, "relay": "nginx", "path": "/sim/" + label,
                          "version": "1", "sha256": "0", "proton": None}}))
    return out

def table(shift, threshold):
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as f:
        f.write("\n".join(records("a", 0) + records("b", shift)) + "\n")
    try:
        p = subprocess.run([ffbench, "compare", "--json", "--threshold", str(threshold),
                            "--base", "a", "--new", "b", f.name],
                           capture_output=True, text=True)
    finally:
        os.unlink(f.name)
    if p.returncode not in (0, 1):
        sys.exit("ab-sim: ff-bench compare failed: " + p.stderr.strip())
    rows = [e for e in map(json.loads, p.stdout.splitlines()) if e["event"] == "comparison"]
    return rows, p.returncode

def pct(k, n):
    return "%6.2f%%" % (100.0 * k / n) if n else "     -"

# A/A: the same distribution under two labels.
t_any = t_raw = t_gate2 = t_gate5 = c_any = c_raw = c_n = 0
for _ in range(tables):
    rows, _rc = table(0, 2)
    bad = [r for r in rows if r["verdict"] != "no change"]
    raw = [r for r in rows if r["p"] < 0.05]
    t_any += bool(bad)
    t_raw += bool(raw)
    c_any += len(bad)
    c_raw += len(raw)
    c_n += len(rows)
    t_gate2 += any(r["verdict"] == "worse" for r in rows)
    t_gate5 += any(r["verdict"] == "worse" and (r["ci_high_pct"] < -5 or r["ci_low_pct"] > 5)
                   for r in rows)
per = c_n // tables
print("A/A: %d tables of %d cases x %d metrics = %d comparisons, %d runs a side, normal noise CV %g%%"
      % (tables, cases, per // cases, per, runs, cv * 100))
print("  tables with any verdict other than 'no change':      %s  (comparisons: %s)"
      % (pct(t_any, tables), pct(c_any, c_n)))
print("  tables a --threshold 2 gate fails (a 'worse'):       %s" % pct(t_gate2, tables))
print("  tables a --threshold 5 gate would fail:              %s" % pct(t_gate5, tables))
print("  for reference, raw p < 0.05 alone (the old verdict): %s  (comparisons: %s)"
      % (pct(t_raw, tables), pct(c_raw, c_n)))

# Detection: every case of the new build slower by the shift.
for s in shifts:
    det = {}
    for _ in range(tables):
        rows, _rc = table(s, 2)
        for r in rows:
            d = det.setdefault(r["metric"], [0, 0, 0])
            d[0] += r["verdict"] == "worse"
            d[1] += r["verdict"] == "better"
            d[2] += 1
    print("Shift: new %g%% slower (throughput, ops/s; the same relay CPU), --threshold 2:" % (s * 100))
    for m, (w, b, n) in det.items():
        print("  %-28s worse %s  better %s  of %d comparisons" % (m, pct(w, n), pct(b, n), n))
