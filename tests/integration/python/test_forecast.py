"""docguard forecasts when growing arrays reach their bounds: documents pushed to at steady rates
through docguard (PyMongo, FerretDB) under a rule with an array bound. The fast one is forecast
within 25% of when its first push is refused (code 121) and is an `approaching_limit` finding and
a docguard_limit_eta_seconds series before that; the slow one is beyond the horizon and not a
finding; one pushed with $slice has no forecast (FerretDB ignores $slice, docguard sees it in the
request). A document read by introspection before any traffic is forecast from its stored length.

Small bound (60 elements), fast rates (10/s) and a short horizon (20 s) keep it to seconds."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pymongo
import pytest
from pymongo.errors import WriteError

import harness

pytestmark = pytest.mark.proxy

BOUND = 60
HORIZON = 20  # seconds
APP = "forecast-test"
ELEMENT = "x" * 190  # with its key and header, about 200 bytes in the stored array
SEEDED_LENGTH = 30


def _config(path: Path) -> Path:
    path.write_text(
        "rules:\n"
        "  - match: \"forecast.*\"\n"
        "    action: block\n"
        f"    array_length: {{ events: {BOUND} }}\n"
        "tracking:\n"
        "  read_sample_rate: 1.0\n"
        "advisor:\n"
        "  live_sample_every: 1\n"
        f"  forecast_horizon: {HORIZON}s\n"
        "introspection:\n"
        "  max_commands_per_second: 50\n"
        "  jitter: 0\n")
    return path


def _get_json(proc: harness.Proc, path: str) -> dict:
    code, body = harness.http_get(f"http://127.0.0.1:{proc.ports['admin']}{path}")
    assert code == 200, body
    return json.loads(body)


def _rows(report: dict, collection: str) -> list[dict]:
    return [r for r in report["approaching_limits"]
            if r["collection"] == collection and r["limit"] == "array_length"]


def _gauge(proc: harness.Proc, collection: str) -> float | None:
    metrics = harness.fetch_metrics(f"127.0.0.1:{proc.ports['admin']}")
    for (name, labels), value in metrics.items():
        labels = dict(labels)
        if (name == "docguard_limit_eta_seconds" and labels.get("collection") == collection
                and labels.get("limit") == "array_length"):
            return value
    return None


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    """FerretDB holding the documents before docguard starts (one with a long stored array),
    docguard in front once its first introspection pass has read them."""
    workdir = tmp_path_factory.mktemp("forecast")
    fdb = harness.start_ferretdb(workdir)
    direct_uri = f"mongodb://127.0.0.1:{fdb.ports['listen']}"
    direct = pymongo.MongoClient(direct_uri, directConnection=True)
    # Read by introspection before any push: the stored lengths are facts, so a push past the
    # bound is refused (lengths added up from writes alone only warn), and no read of a
    # collection traffic reaches first runs while the pushes go on.
    for name in ("fast", "slow", "sliced"):
        direct.forecast[name].insert_one({"_id": name, "events": []})
    direct.forecast.seeded.insert_one(
        {"_id": "stored", "events": [{"i": i, "p": ELEMENT} for i in range(SEEDED_LENGTH)]})
    dg = harness.start_docguard(direct_uri, workdir, config=_config(workdir / "docguard.yaml"))
    client = pymongo.MongoClient(f"mongodb://127.0.0.1:{dg.ports['listen']}", appname=APP)
    try:
        deadline = time.monotonic() + 60
        while _get_json(dg, "/status")["introspection"].get("passes", 0) < 1:
            assert time.monotonic() < deadline, "no introspection pass"
            time.sleep(0.1)
        yield dg, client, direct
    finally:
        client.close()
        direct.close()
        dg.stop()
        fdb.stop()


def test_steady_rates_fast_slow_and_sliced(stack):
    dg, client, _ = stack
    db = client.forecast
    intervals = {"fast": 0.1, "slow": 1.0, "sliced": 0.2}
    start = time.monotonic()
    due = dict.fromkeys(intervals, start)
    pushes = dict.fromkeys(intervals, 0)
    fast_sent = []  # when each push to "fast" was answered: the rate the forecast must see
    checked = None  # (time, eta) of the fast one's forecast, read before any refusal
    refused_at = None
    while refused_at is None:
        name = min(due, key=due.get)
        time.sleep(max(0.0, due[name] - time.monotonic()))
        due[name] += intervals[name]
        element = {"i": pushes[name], "p": ELEMENT}
        try:
            if name == "sliced":
                db[name].update_one({"_id": name},
                                    {"$push": {"events": {"$each": [element], "$slice": -5}}})
            else:
                db[name].update_one({"_id": name}, {"$push": {"events": element}})
        except WriteError as e:
            assert name == "fast" and e.code == 121, e
            refused_at = time.monotonic()
            break
        pushes[name] += 1
        if name == "fast":
            fast_sent.append(time.monotonic())
        assert time.monotonic() - start < 30, pushes
        if checked is None and name == "fast" and pushes["fast"] == 25:
            asked = time.monotonic()
            report = _get_json(dg, "/report.json")
            now = time.monotonic()
            rows = _rows(report, "fast")
            assert rows, report["approaching_limits"]
            checked = (now, rows[0]["eta_seconds"])
            assert rows[0]["_id"] == '"fast"' and rows[0]["within_horizon"], rows[0]
            # The rate the pushes really had, measured as the forecast measures it (the growth
            # since the newest push at least half the time since the first push old, up to the
            # report): 10 a second on an idle machine, but a loaded one delays some pushes and
            # the schedule catches up in a burst.
            middle = asked - (asked - fast_sent[0]) / 2
            since = max(i for i, t in enumerate(fast_sent) if t <= middle)
            sent_rate = (len(fast_sent) - 1 - since) / (asked - fast_sent[since])
            assert abs(rows[0]["elements_per_second"] - sent_rate) < 0.25 * sent_rate, (
                rows[0], sent_rate)
            assert rows[0]["bound"] == BOUND
            finding = harness.findings(report, collection="fast", kind="approaching_limit")
            assert finding and finding[0]["field"] == "events", report["findings"]
            assert APP in finding[0]["apps"], finding
            assert "fast" in finding[0]["evidence"]
            gauge = _gauge(dg, "fast")
            assert gauge is not None and abs(gauge - checked[1]) < 1.5, (gauge, checked)
            # slow: beyond the horizon, forecast but not a finding; sliced: no forecast
            slow = _rows(report, "slow")
            assert slow and slow[0]["eta_seconds"] > HORIZON and not slow[0]["within_horizon"], slow
            assert harness.findings(report, collection="slow", kind="approaching_limit") == []
            assert [r for r in report["approaching_limits"] if r["collection"] == "sliced"] == []
            assert harness.findings(report, collection="sliced", kind="approaching_limit") == []
    assert checked is not None, "refused before the forecast was read"
    assert pushes["fast"] == BOUND  # refused exactly at the bound
    truth = refused_at - checked[0]
    estimated = checked[1]
    assert abs(estimated - truth) <= 0.25 * truth, (estimated, truth)
    print(f"fast: estimated {estimated:.2f} s to the bound, refused after {truth:.2f} s")
    # One log line as the fast document entered the horizon; names and numbers, no _id value.
    lines = harness.parse_json_lines(harness.read_log_lines(dg.log_path))
    entered = [ln for ln in lines if "approaching its limit" in str(ln.get("msg", ""))]
    assert [ln.get("ns") for ln in entered].count("forecast.fast") == 1, entered
    assert not [ln for ln in entered if ln.get("ns") in ("forecast.slow", "forecast.sliced")]


def test_a_stored_long_array_is_forecast_from_its_stored_length(stack):
    dg, client, _ = stack
    coll = client.forecast.seeded
    pushes = 0
    start = time.monotonic()
    while pushes < 15:  # 5 per second for 3 s
        time.sleep(max(0.0, start + pushes * 0.2 - time.monotonic()))
        coll.update_one({"_id": "stored"}, {"$push": {"events": {"i": pushes, "p": ELEMENT}}})
        pushes += 1
    rows = _rows(_get_json(dg, "/report.json"), "seeded")
    assert rows, "no forecast for the seeded document"
    row = rows[0]
    assert row["length"] == SEEDED_LENGTH + pushes, row  # from the stored 30, not from 0
    assert abs(row["elements_per_second"] - 5) < 1.25, row
    expected = (BOUND - row["length"]) / 5
    assert abs(row["eta_seconds"] - expected) <= 0.25 * expected, (row, expected)
    # the size forecasts use the stored document's size and the pushed elements' bytes
    sized = [r for r in _get_json(dg, "/report.json")["approaching_limits"]
             if r["collection"] == "seeded" and r["limit"] == "16MB"]
    assert sized and 150 * 5 * 0.75 < sized[0]["bytes_per_second"] < 250 * 5 * 1.25, sized
