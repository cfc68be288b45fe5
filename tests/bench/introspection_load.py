#!/usr/bin/env python3
"""Benchmark (not a test, not in CI): client latency through docguard while introspection reads
the cluster hard, against the same load with `introspection: {enabled: false}`.

    .tools/venv/bin/python tests/bench/introspection_load.py            # ~3 minutes
    .tools/venv/bin/python tests/bench/introspection_load.py --rounds 3 --seconds 20 --threads 4 \
        --collections 20 --documents 2000 --interval 3s --rate 1000 --sample-size 1000 \
        [--replica-set] [--json results.json]

Uses DOCGUARD_BIN (default build/bin/docguard; build it first) and the FerretDB of
scripts/install-deps.sh. One FerretDB (SQLite) is loaded with --collections x --documents
documents (~300 B each, an index on `k`) in database `bench_intro`; with --replica-set the
replica-set double (tests/cluster/rs_double.py, a child process) stands in front of it as rs0 and
docguard gets its replicaSet URI, so introspection reads the secondaries and clients the primary
(all of them the same FerretDB).

Rounds interleave the two modes (round 1: on, off; round 2: off, on; ...), each with a fresh
docguard (threads: 2): 2 s of unmeasured warm-up, then --seconds of load from --threads PyMongo
threads sharing one client: 80 % find_one({k: random 0..99}), 20 % insert_one, each in a random
collection of `bench_intro` (the collections introspection samples). Not by _id: FerretDB 1.24
(SQLite) scans the whole collection for find_one({_id}) (29 ms at 2,000 documents here) and stops
at the first match for {k} (0.7 ms), so the _id load would measure FerretDB's scans. With introspection on: interval --interval,
max_commands_per_second --rate, sample_size --sample-size, jitter 0: a pass reads every
collection's indexes, statistics, index usage and --sample-size documents, and the next starts
--interval later. Each round reports ops/s, p50/p99/max latency, errors, the CPU seconds docguard
and FerretDB used in the measured window, and the introspection passes and commands in it.

The numbers are this machine's: the client, docguard and FerretDB share its cores, and the
PyMongo client's own cost (the GIL) is in every latency.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "cluster"))
import harness  # noqa: E402  tests/cluster/harness.py (FerretDB, the double, docguard helpers)

base = harness.base  # tests/integration/python/harness.py
DB = "bench_intro"
CLK_TCK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """utime + stime of a process (all its threads) so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def load_data(uri: str, collections: int, documents: int) -> None:
    import pymongo
    client = pymongo.MongoClient(uri, serverSelectionTimeoutMS=10000)
    client.drop_database(DB)
    db = client[DB]
    for c in range(collections):
        coll = db[f"c{c:02d}"]
        coll.insert_many([{"_id": i, "k": i % 100, "name": f"item {i}", "tags": [i % 7, i % 11],
                           "payload": "x" * 200} for i in range(documents)], ordered=False)
        coll.create_index("k")
    client.close()


def config_text(on: bool, a) -> str:
    if not on:
        return "introspection:\n  enabled: false\n"
    return ("introspection:\n"
            f"  interval: {a.interval}\n"
            f"  max_commands_per_second: {a.rate}\n"
            f"  sample_size: {a.sample_size}\n"
            "  jitter: 0\n")


def percentile(sorted_values: list[float], q: float) -> float:
    if not sorted_values:
        return float("nan")
    return sorted_values[min(len(sorted_values) - 1, int(q * (len(sorted_values) - 1) + 0.5))]


def run_round(mode: str, upstream: str, ferret_pid: int, workdir: Path, a) -> dict:
    import pymongo
    from bson import ObjectId

    cfg = workdir / f"docguard-{mode}.yaml"
    cfg.write_text(config_text(mode == "on", a))
    dg = base.start_docguard(upstream, workdir, config=cfg, threads=2)
    admin = f"http://127.0.0.1:{dg.ports['admin']}"
    client = pymongo.MongoClient(f"mongodb://127.0.0.1:{dg.ports['listen']}", appname="bench-load",
                                 maxPoolSize=a.threads + 2, serverSelectionTimeoutMS=10000)
    names = [f"c{c:02d}" for c in range(a.collections)]
    measuring = threading.Event()
    stop = threading.Event()
    latencies: list[list[float]] = [[] for _ in range(a.threads)]
    errors = [0] * a.threads

    def worker(n: int) -> None:
        rng = random.Random(n * 7919 + (mode == "on"))
        mine = latencies[n]
        colls = [client[DB][name] for name in names]
        while not stop.is_set():
            coll = colls[rng.randrange(len(colls))]
            t0 = time.perf_counter()
            try:
                if rng.random() < 0.8:
                    coll.find_one({"k": rng.randrange(100)})
                else:
                    coll.insert_one({"_id": ObjectId(), "k": rng.randrange(100), "name": "load",
                                     "tags": [1, 2], "payload": "y" * 200})
            except pymongo.errors.PyMongoError:
                errors[n] += 1
                continue
            if measuring.is_set():
                mine.append(time.perf_counter() - t0)

    threads = [threading.Thread(target=worker, args=(n,), daemon=True) for n in range(a.threads)]
    for t in threads:
        t.start()
    time.sleep(2.0)  # warm-up: connections made, the first introspection pass under way
    intro_before = json.loads(base.http_get(admin + "/status")[1])["introspection"]
    cpu_dg, cpu_fdb = cpu_seconds(dg.popen.pid), cpu_seconds(ferret_pid)
    errors_before = sum(errors)
    measuring.set()
    t0 = time.monotonic()
    time.sleep(a.seconds)
    measuring.clear()
    elapsed = time.monotonic() - t0
    cpu_dg, cpu_fdb = cpu_seconds(dg.popen.pid) - cpu_dg, cpu_seconds(ferret_pid) - cpu_fdb
    intro_after = json.loads(base.http_get(admin + "/status")[1])["introspection"]
    stop.set()
    for t in threads:
        t.join(10)
    client.close()
    dg.stop()
    lat = sorted(x for per in latencies for x in per)
    row = {"mode": mode, "ops": len(lat), "seconds": elapsed, "ops_per_s": len(lat) / elapsed,
           "p50_ms": percentile(lat, 0.50) * 1e3, "p99_ms": percentile(lat, 0.99) * 1e3,
           "max_ms": (lat[-1] if lat else float("nan")) * 1e3,
           "errors": sum(errors) - errors_before,
           "docguard_cpu_s": cpu_dg, "ferretdb_cpu_s": cpu_fdb,
           "passes": intro_after.get("passes", 0) - intro_before.get("passes", 0),
           "commands": intro_after.get("commands", 0) - intro_before.get("commands", 0),
           "last_result": intro_after.get("last_result", "")}
    row["_latencies"] = lat
    return row


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--seconds", type=float, default=20.0)
    p.add_argument("--threads", type=int, default=4)
    p.add_argument("--collections", type=int, default=20)
    p.add_argument("--documents", type=int, default=2000)
    p.add_argument("--interval", default="3s")
    p.add_argument("--rate", type=float, default=1000)
    p.add_argument("--sample-size", type=int, default=1000)
    p.add_argument("--replica-set", action="store_true",
                   help="put the replica-set double (3 members) in front of FerretDB")
    p.add_argument("--json", type=Path, help="write the rounds and the summary here")
    p.add_argument("--keep", action="store_true", help="keep the work dir (logs)")
    a = p.parse_args()

    workdir = Path(tempfile.mkdtemp(prefix="docguard-bench-intro-"))
    ferret = harness.start_ferretdb(workdir / "ferret")
    double = None
    try:
        ferret_uri = f"mongodb://127.0.0.1:{ferret.ports['listen']}/"
        t0 = time.monotonic()
        load_data(ferret_uri, a.collections, a.documents)
        print(f"loaded {a.collections} x {a.documents} documents in {time.monotonic() - t0:.1f} s",
              file=sys.stderr)
        upstream = ferret_uri
        if a.replica_set:
            double = harness.DoubleProcess(ferret, log_path=workdir / "rs_double.log")
            upstream = double.uri(heartbeatFrequencyMS=500)
        rows = []
        for r in range(a.rounds):
            for mode in (("on", "off") if r % 2 == 0 else ("off", "on")):
                row = run_round(mode, upstream, ferret.popen.pid, workdir, a)
                row["round"] = r + 1
                rows.append(row)
                print(f"round {r + 1} {mode:>3}: {row['ops_per_s']:7.0f} ops/s  "
                      f"p50 {row['p50_ms']:.2f} ms  p99 {row['p99_ms']:.2f} ms  "
                      f"passes {row['passes']}  commands {row['commands']}  "
                      f"docguard cpu {row['docguard_cpu_s']:.1f} s  errors {row['errors']}",
                      file=sys.stderr)
    finally:
        if double:
            double.close()
        ferret.stop()
        if not a.keep:
            import shutil
            shutil.rmtree(workdir, ignore_errors=True)
        else:
            print(f"work dir kept: {workdir}", file=sys.stderr)

    print(f"\nintrospection under load: {a.threads} PyMongo threads (80 % find_one by k, 20 % "
          f"insert_one) through docguard, {a.collections} x {a.documents} documents, "
          f"{a.rounds} interleaved rounds x {a.seconds:g} s per mode; introspection on = "
          f"interval {a.interval}, max_commands_per_second {a.rate:g}, sample_size "
          f"{a.sample_size}; upstream {'replica-set double -> ' if a.replica_set else ''}"
          "FerretDB\n")
    print("| round | introspection | ops/s | p50 ms | p99 ms | max ms | errors | docguard CPU s "
          "| FerretDB CPU s | passes | commands |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for row in rows:
        print(f"| {row['round']} | {row['mode']} | {row['ops_per_s']:.0f} | {row['p50_ms']:.2f} | "
              f"{row['p99_ms']:.2f} | {row['max_ms']:.1f} | {row['errors']} | "
              f"{row['docguard_cpu_s']:.1f} | {row['ferretdb_cpu_s']:.1f} | {row['passes']} | "
              f"{row['commands']} |")
    summary = {}
    print("\n| introspection | ops/s (mean of rounds) | p50 ms (all ops) | p99 ms (all ops) "
          "| p99 ms (median of rounds) | docguard CPU s/round | passes/round |")
    print("|---|---|---|---|---|---|---|")
    for mode in ("on", "off"):
        mine = [row for row in rows if row["mode"] == mode]
        lat = sorted(x for row in mine for x in row["_latencies"])
        summary[mode] = {
            "ops_per_s": statistics.mean(row["ops_per_s"] for row in mine),
            "p50_ms": percentile(lat, 0.50) * 1e3, "p99_ms": percentile(lat, 0.99) * 1e3,
            "p99_ms_median_of_rounds": statistics.median(row["p99_ms"] for row in mine),
            "docguard_cpu_s": statistics.mean(row["docguard_cpu_s"] for row in mine),
            "passes": statistics.mean(row["passes"] for row in mine)}
        s = summary[mode]
        print(f"| {mode} | {s['ops_per_s']:.0f} | {s['p50_ms']:.2f} | {s['p99_ms']:.2f} | "
              f"{s['p99_ms_median_of_rounds']:.2f} | {s['docguard_cpu_s']:.1f} | "
              f"{s['passes']:.1f} |")
    if a.json:
        a.json.write_text(json.dumps({
            "settings": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(a).items()},
            "rounds": [{k: v for k, v in row.items() if k != "_latencies"} for row in rows],
            "summary": summary}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
