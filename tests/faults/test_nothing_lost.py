"""Nothing lost.

A randomized concurrent PyMongo workload through docguard against FerretDB, with FerretDB killed
(SIGKILL) and restarted on the same port and data directory in the middle:

  * several threads, each with its own MongoClient (retryWrites off: the test retries itself and
    keeps a ledger of what was acknowledged);
  * ordered and unordered insert batches (bulk_write of InsertOne), some documents violating a
    block rule (max_array_length 5), unique _ids;
  * counter upserts ({$inc: {n: 1}}, upsert) and upserts that violate the rule;
  * point reads of acknowledged documents.

Afterwards, reading FerretDB directly:
  * every acknowledged document is present exactly once, with the content that was sent;
  * every blocked document got error 121 and is absent; documents an ordered batch did not reach
    are absent;
  * each counter equals its acknowledged increments, plus at most the increments whose outcome
    was unknown (connection lost before the reply);
  * no reply reached the wrong request: every batch's reported counts and error indexes match what
    it sent, upsert results name the filter's _id, reads return the document asked for.

The RNG seed is printed (DOCGUARD_FAULTS_SEED=N reproduces a run's choices).
"""

from __future__ import annotations

import os
import random
import threading
import time

import pymongo
import pytest
from pymongo import InsertOne
from pymongo.errors import BulkWriteError, PyMongoError, WriteError

import faultlib as F
import harness

DB, COLL, CNT = "nothinglost", "docs", "counters"
BOUND = 5
THREADS = 4
DURATION = float(os.environ.get("DOCGUARD_NOTHING_LOST_SECONDS", "16"))
RESTART_AT = DURATION * 0.35
MAX_ATTEMPTS = 10

CONFIG = f"""
limits:
  connect_timeout: 1s
mode: block
rules:
  - match: "{DB}.*"
    action: block
    max_array_length: {BOUND}
"""


class Ledger:
    """What one worker sent and what it was told."""

    def __init__(self) -> None:
        self.docs: dict[str, dict] = {}      # _id -> document sent
        self.state: dict[str, str] = {}      # _id -> acked | blocked | not_reached | unknown
        self.acked_inc: dict[str, int] = {}  # counter _id -> acknowledged increments
        self.unknown_inc: dict[str, int] = {}
        self.blocked_upserts: list[str] = []
        self.errors: list[str] = []          # contract violations seen by the worker
        self.stats = {"batches": 0, "incs": 0, "blocked_upserts": 0, "reads": 0,
                      "conn_errors": 0, "acked_after_restart": 0}


def _violates(doc: dict) -> bool:
    return len(doc["arr"]) > BOUND


def _is_transient(e: Exception) -> bool:
    """Connection-level failures whose outcome is unknown (retry)."""
    if isinstance(e, (BulkWriteError, WriteError)):
        return False
    return isinstance(e, PyMongoError)


def _worker(t: int, uri: str, seed: int, deadline: float, restarted: threading.Event,
            led: Ledger) -> None:
    rng = random.Random(seed * 1000 + t)
    client = pymongo.MongoClient(uri, retryWrites=False, retryReads=False, maxPoolSize=2,
                                 serverSelectionTimeoutMS=3000, connectTimeoutMS=2000,
                                 socketTimeoutMS=5000)
    docs_c, cnt_c = client[DB][COLL], client[DB][CNT]
    seq = 0
    try:
        while time.monotonic() < deadline:
            r = rng.random()
            if r < 0.45:
                seq = _insert_batch(t, rng, seq, docs_c, led, restarted, deadline)
            elif r < 0.75:
                _inc(t, rng, cnt_c, led, restarted, deadline)
            elif r < 0.85:
                seq += 1
                _blocked_upsert(f"b-{t}-{seq}", cnt_c, led, deadline)
            else:
                _read(rng, docs_c, led)
    except Exception as e:  # noqa: BLE001 -- a crash of the worker is a finding
        led.errors.append(f"worker {t} crashed: {type(e).__name__}: {e}")
    finally:
        client.close()


def _insert_batch(t, rng, seq, coll, led: Ledger, restarted, deadline) -> int:
    n = rng.randint(1, 20)
    batch = []
    for _ in range(n):
        seq += 1
        arr_len = rng.randint(BOUND + 1, BOUND + 8) if rng.random() < 0.12 else rng.randint(0, BOUND)
        doc = {"_id": f"d-{t}-{seq}", "t": t, "seq": seq, "arr": list(range(arr_len)),
               "pay": rng.randbytes(rng.randint(0, 64)).hex()}
        batch.append(doc)
        led.docs[doc["_id"]] = doc
        led.state[doc["_id"]] = "unknown"
    ordered = rng.random() < 0.5
    led.stats["batches"] += 1
    bad = [i for i, d in enumerate(batch) if _violates(d)]
    for attempt in range(MAX_ATTEMPTS):
        first = attempt == 0
        try:
            res = coll.bulk_write([InsertOne(d) for d in batch], ordered=ordered if first else False)
            if res.inserted_count != len(batch):
                led.errors.append(f"batch {batch[0]['_id']}: inserted_count {res.inserted_count} "
                                  f"!= {len(batch)} sent")
            if bad:
                led.errors.append(f"batch {batch[0]['_id']}: violating docs {bad} accepted")
            for d in batch:
                led.state[d["_id"]] = "acked"
            if restarted.is_set():
                led.stats["acked_after_restart"] += 1
            return seq
        except BulkWriteError as e:
            _settle_bulk_error(batch, bad, e.details, ordered and first, first, led)
            if restarted.is_set():
                led.stats["acked_after_restart"] += 1
            return seq
        except Exception as e:  # noqa: BLE001
            if not _is_transient(e):
                led.errors.append(f"batch {batch[0]['_id']}: {type(e).__name__}: {e}")
                return seq
            led.stats["conn_errors"] += 1
            if time.monotonic() > deadline + 10:
                break
            time.sleep(0.3)
    return seq  # outcome unknown: the docs stay "unknown"


def _settle_bulk_error(batch, bad, details, ordered: bool, first: bool, led: Ledger) -> None:
    errs = details.get("writeErrors", [])
    idx = {e["index"]: e for e in errs}
    tag = batch[0]["_id"]
    for e in errs:
        code = e.get("code")
        i = e["index"]
        if not 0 <= i < len(batch):
            led.errors.append(f"batch {tag}: error index {i} outside the batch of {len(batch)}")
            continue
        if code == 121:
            if i not in bad:
                led.errors.append(f"batch {tag}: doc {i} blocked but complies: {e}")
            led.state[batch[i]["_id"]] = "blocked"
        elif code == 11000 and not first:
            led.state[batch[i]["_id"]] = "acked"  # written by an earlier attempt whose reply was lost
        else:
            led.errors.append(f"batch {tag}: unexpected write error {e}")
    if ordered:
        i0 = bad[0] if bad else None
        if i0 is None or sorted(idx) != [i0]:
            led.errors.append(f"batch {tag} (ordered): errors at {sorted(idx)}, violating docs {bad}")
        elif details.get("nInserted") != i0:
            led.errors.append(f"batch {tag} (ordered): nInserted {details.get('nInserted')} != {i0}")
        for i, d in enumerate(batch):
            if i0 is not None and i < i0:
                led.state[d["_id"]] = "acked"
            elif i0 is not None and i > i0:
                led.state[d["_id"]] = "not_reached"
        return
    if first:
        if sorted(idx) != bad:
            led.errors.append(f"batch {tag} (unordered): errors at {sorted(idx)}, violating {bad}")
        if details.get("nInserted") != len(batch) - len(bad):
            led.errors.append(f"batch {tag} (unordered): nInserted {details.get('nInserted')} "
                              f"!= {len(batch) - len(bad)}")
    for i, d in enumerate(batch):
        if i not in idx:
            led.state[d["_id"]] = "acked"


def _inc(t, rng, coll, led: Ledger, restarted, deadline) -> None:
    key = f"c-{t}-{rng.randint(0, 15)}"
    led.stats["incs"] += 1
    for _attempt in range(MAX_ATTEMPTS):
        try:
            res = coll.update_one({"_id": key}, {"$inc": {"n": 1}}, upsert=True)
            if res.upserted_id is not None and res.upserted_id != key:
                led.errors.append(f"upsert of {key} reports upserted_id {res.upserted_id!r}")
            if res.upserted_id is None and res.matched_count != 1:
                led.errors.append(f"upsert of {key}: matched {res.matched_count}, no upsert")
            led.acked_inc[key] = led.acked_inc.get(key, 0) + 1
            if restarted.is_set():
                led.stats["acked_after_restart"] += 1
            return
        except Exception as e:  # noqa: BLE001
            if not _is_transient(e):
                led.errors.append(f"inc {key}: {type(e).__name__}: {e}")
                return
            led.stats["conn_errors"] += 1
            led.unknown_inc[key] = led.unknown_inc.get(key, 0) + 1
            if time.monotonic() > deadline + 10:
                return
            time.sleep(0.3)


def _blocked_upsert(key, coll, led: Ledger, deadline) -> None:
    led.blocked_upserts.append(key)
    led.stats["blocked_upserts"] += 1
    for _attempt in range(MAX_ATTEMPTS):
        try:
            coll.update_one({"_id": key}, {"$set": {"arr": list(range(BOUND + 3))}}, upsert=True)
            led.errors.append(f"violating upsert {key} was accepted")
            return
        except WriteError as e:
            if e.code != 121:
                led.errors.append(f"violating upsert {key}: code {e.code}: {e}")
            return
        except Exception as e:  # noqa: BLE001
            if not _is_transient(e):
                led.errors.append(f"violating upsert {key}: {type(e).__name__}: {e}")
                return
            led.stats["conn_errors"] += 1
            if time.monotonic() > deadline + 10:
                return
            time.sleep(0.3)


def _read(rng, coll, led: Ledger) -> None:
    acked = [k for k, s in led.state.items() if s == "acked"]
    if not acked:
        return
    key = rng.choice(acked)
    try:
        got = coll.find_one({"_id": key})
    except PyMongoError:
        led.stats["conn_errors"] += 1
        return
    led.stats["reads"] += 1
    if got != led.docs[key]:
        led.errors.append(f"read of {key} returned {got!r}")


def test_nothing_lost_across_upstream_restart(docguards, workdir):
    seed = int(os.environ.get("DOCGUARD_FAULTS_SEED") or random.SystemRandom().randrange(1 << 30))
    print(f"\nnothing-lost seed: {seed} (DOCGUARD_FAULTS_SEED={seed} to repeat)")
    t_start = time.monotonic()
    fdir = workdir / "nothing-lost-ferret"
    fport = harness.free_port()
    fdb = harness.start_ferretdb(fdir, port=fport)
    furi = f"mongodb://127.0.0.1:{fport}"
    try:
        dg = docguards(furi, CONFIG)
        closed_before = dg.metric("docguard_upstream_errors_total", kind="closed")
        restarted = threading.Event()
        ledgers = [Ledger() for _ in range(THREADS)]
        deadline = time.monotonic() + DURATION
        workers = [threading.Thread(target=_worker, args=(t, dg.uri, seed, deadline, restarted,
                                                          ledgers[t]), daemon=True)
                   for t in range(THREADS)]
        for w in workers:
            w.start()

        time.sleep(RESTART_AT)
        fdb.popen.kill()  # SIGKILL, mid-workload
        fdb.popen.wait(timeout=10)
        killed_at = time.monotonic()
        time.sleep(1.0)
        fdb = harness.start_ferretdb(fdir, port=fport)  # same port, same data directory
        restarted.set()
        down_for = time.monotonic() - killed_at

        for w in workers:
            w.join(timeout=DURATION + 40)
        assert not any(w.is_alive() for w in workers), "a worker did not finish in time"
        assert dg.alive(), "docguard died"

        # ---- audit, reading FerretDB directly
        direct = pymongo.MongoClient(furi, serverSelectionTimeoutMS=10000)
        stored = list(direct[DB][COLL].find({}))
        counters = {d["_id"]: d for d in direct[DB][CNT].find({})}
        direct.close()
        ids = [d["_id"] for d in stored]
        by_id = {d["_id"]: d for d in stored}
        problems: list[str] = []
        if len(ids) != len(set(ids)):
            problems.append(f"duplicate _ids stored: {len(ids) - len(set(ids))}")

        sent: dict[str, dict] = {}
        totals = {"acked": 0, "blocked": 0, "not_reached": 0, "unknown": 0}
        for led in ledgers:
            problems += led.errors
            sent.update(led.docs)
            for key, state in led.state.items():
                totals[state] += 1
                doc = by_id.get(key)
                if state == "acked" and doc != led.docs[key]:
                    problems.append(f"acknowledged {key} is {'missing' if doc is None else 'altered'}")
                elif state in ("blocked", "not_reached") and doc is not None:
                    problems.append(f"{state} {key} is present")
            for key in led.blocked_upserts:
                if key in counters:
                    problems.append(f"blocked upsert {key} is present: {counters[key]}")
            for key in set(led.acked_inc) | set(led.unknown_inc):
                acked, unknown = led.acked_inc.get(key, 0), led.unknown_inc.get(key, 0)
                n = counters.get(key, {}).get("n", 0)
                if not acked <= n <= acked + unknown:
                    problems.append(f"counter {key}: n={n}, acknowledged {acked}, unknown {unknown}")
        strays = set(by_id) - set(sent)
        if strays:
            problems.append(f"documents nobody sent: {sorted(strays)[:5]}")
        known_counters = {k for led in ledgers for k in set(led.acked_inc) | set(led.unknown_inc)}
        if set(counters) - known_counters:
            problems.append(f"counters nobody incremented: {sorted(set(counters) - known_counters)[:5]}")

        stats = {k: sum(led.stats[k] for led in ledgers) for k in ledgers[0].stats}
        elapsed = time.monotonic() - t_start
        print(f"documents: {totals}; stored {len(stored)}; counters {len(counters)} "
              f"({sum(sum(l.acked_inc.values()) for l in ledgers)} acknowledged increments, "
              f"{sum(sum(l.unknown_inc.values()) for l in ledgers)} unknown); ops: {stats}; "
              f"upstream down {down_for:.1f}s; total {elapsed:.1f}s")
        assert not problems, f"seed {seed}: {len(problems)} problems:\n" + "\n".join(problems[:30])
        # the restart really hit the workload, and the workload recovered from it
        assert stats["conn_errors"] > 0, "the upstream restart caused no connection error at all"
        assert stats["acked_after_restart"] > 0, "nothing was acknowledged after the restart"
        assert totals["blocked"] > 0 and totals["acked"] > 0
        assert dg.metric("docguard_upstream_errors_total", kind="closed") > closed_before
        assert elapsed < 60, f"took {elapsed:.1f}s"
    finally:
        fdb.stop()
