"""The live design advisor: a workload with each traffic pattern, then /report.json has the
findings, /metrics has docguard_findings, and headless chromium renders /report."""

from __future__ import annotations

import datetime
import json
import os
import shutil
import subprocess
import tempfile
import time
import urllib.request
import zlib
from pathlib import Path

import pymongo
import pytest

import harness

pytestmark = pytest.mark.proxy

TOKEN = "advisor-token"
ROOT = Path(__file__).resolve().parents[3]


def _get(url: str) -> str:
    req = urllib.request.Request(url)
    req.add_header("Authorization", f"Bearer {TOKEN}")
    with urllib.request.urlopen(req, timeout=10) as r:
        return r.read().decode()


@pytest.fixture(scope="module")
def advised(env, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("advisor")
    cfg = tmp / "advisor.yaml"
    cfg.write_text(
        f"admin: {{ listen: 127.0.0.1:{harness.free_port()}, token: {TOKEN} }}\n"
        "advisor: { live_sample_every: 1, bucket_min_documents: 300 }\n"
        # Collections the workload creates are read by introspection soon after traffic first
        # reaches them (catch-up reads between passes); quick here so the test need not wait.
        "introspection: { max_commands_per_second: 100 }\n")
    dg = harness.start_docguard(env.ferret_uri, tmp, config=cfg, extra_args=[])
    try:
        client = pymongo.MongoClient(f"mongodb://127.0.0.1:{dg.ports['listen']}",
                                     directConnection=True, appname="advisor-it")
        db = client["advisor_it"]
        for name in db.list_collection_names():
            db.drop_collection(name)
        # unbounded $push
        db.posts.insert_one({"_id": 1, "title": "t", "comments": []})
        for i in range(20):
            db.posts.update_one({"_id": 1}, {"$push": {"comments": {"n": i}}})
        # $lookup ratio + unindexed foreignField + computed $group
        db.customers.insert_many([{"_id": i, "name": f"c{i}", "tier": "gold"} for i in range(5)])
        db.orders.insert_many([{"_id": i, "customerId": i % 5, "total": i} for i in range(20)])
        for _ in range(40):  # most reads of orders join: 40 of 64
            try:  # FerretDB 1.24 has no $lookup; docguard sees the request all the same
                list(db.orders.aggregate([
                    {"$lookup": {"from": "customers", "localField": "customerId",
                                 "foreignField": "custKey", "as": "customer"}},
                    {"$project": {"total": 1, "customer.name": 1}}]))
            except pymongo.errors.OperationFailure:
                pass
        for _ in range(12):
            list(db.orders.aggregate([{"$group": {"_id": "$customerId",
                                                  "sum": {"$sum": "$total"}}}]))
        # equality filters on an unindexed reference, case-insensitive regex
        for i in range(12):
            list(db.orders.find({"customerId": i % 5}))
        list(db.customers.find({"name": {"$regex": "^C1", "$options": "i"}}))
        # subset: large documents, reads projecting a small part
        big = "x" * 8000
        db.products.insert_many([{"_id": i, "name": f"p{i}", "price": i, "description": big,
                                  "reviewsText": big} for i in range(10)])
        for i in range(12):
            list(db.products.find({"_id": i % 10}, {"name": 1, "price": 1}))
        # bucket: many tiny readings with a key and a time field
        now = datetime.datetime(2026, 1, 1)
        db.readings.insert_many([{"sensorId": i % 5, "ts": now + datetime.timedelta(seconds=i),
                                  "v": i} for i in range(400)])
        yield dg
    finally:
        dg.stop()


def test_report_json_has_each_traffic_finding(advised):
    base = f"http://127.0.0.1:{advised.ports['admin']}"
    expected = {
        ("posts", "unbounded_array"),
        ("orders", "join_heavy"),
        ("customers", "unindexed_reference"),  # the $lookup's foreignField
        ("orders", "unindexed_query"),  # equality filters on customerId
        ("orders", "computed"),
        ("customers", "case_insensitive_regex"),
        ("products", "subset"),
        ("readings", "bucket"),
        ("orders", "no_validator"),
    }
    # Findings that need indexes and validators wait for introspection's read of the
    # collections the workload created: never guessed from traffic while it runs.
    deadline = time.monotonic() + 60
    while True:
        report = json.loads(_get(base + "/report.json"))
        kinds = {(f["collection"], f["kind"]) for f in report["findings"]}
        if expected <= kinds or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert expected <= kinds, (sorted(expected - kinds), sorted(kinds))
    sources = {(f["collection"], f["kind"]): f["source"] for f in report["findings"]}
    assert sources[("orders", "no_validator")] == "metadata"
    assert sources[("posts", "unbounded_array")] == "traffic"
    # Traffic findings name the client apps (the driver's appName) that showed them; what
    # docguard read of the cluster names none.
    apps = {(f["collection"], f["kind"]): f["apps"] for f in report["findings"]}
    assert apps[("posts", "unbounded_array")] == ["advisor-it"]
    assert apps[("orders", "join_heavy")] == ["advisor-it"]
    assert apps[("orders", "no_validator")] == []
    metrics = _get(base + "/metrics")
    assert 'docguard_findings{collection="posts",db="advisor_it",kind="unbounded_array"' in metrics


def test_report_needs_the_admin_token(advised):
    base = f"http://127.0.0.1:{advised.ports['admin']}"
    with pytest.raises(urllib.error.HTTPError) as e:
        urllib.request.urlopen(base + "/report", timeout=5)
    assert e.value.code == 401


def _chromium() -> str:
    path = shutil.which("chromium")
    if not path:
        pytest.skip("chromium not installed (scripts/install-deps.sh installs it)")
    return path


def _chromium_args(out_dir: str) -> list[str]:
    return [_chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
            "--no-first-run", "--disable-background-networking", "--disable-component-update",
            "--disable-sync", f"--user-data-dir={out_dir}"]


def _saved_report(advised, tmp_path) -> Path:
    # Chromium cannot send a bearer token: render a saved copy (the page is self-contained).
    page = tmp_path / "report.html"
    page.write_text(_get(f"http://127.0.0.1:{advised.ports['admin']}/report"))
    return page


def test_browser_renders_findings_and_charts(advised, tmp_path):
    page = _saved_report(advised, tmp_path)
    dom = subprocess.run(_chromium_args(tempfile.mkdtemp()) + ["--dump-dom", page.as_uri()],
                         capture_output=True, text=True, timeout=120).stdout
    assert "unbounded_array" in dom and "join_heavy" in dom and "<svg" in dom
    assert "comments" in dom


def _png_pixels_vary(data: bytes) -> bool:
    # Enough PNG decoding for a non-uniformity check: inflate the IDAT stream.
    pos, idat = 8, b""
    while pos < len(data):
        length = int.from_bytes(data[pos:pos + 4], "big")
        kind = data[pos + 4:pos + 8]
        if kind == b"IDAT":
            idat += data[pos + 8:pos + 8 + length]
        pos += 12 + length
    raw = zlib.decompress(idat)
    return len(set(raw[i:i + 64] for i in range(0, min(len(raw), 4_000_000), 4096))) > 10


def test_browser_screenshot(advised, tmp_path):
    page = _saved_report(advised, tmp_path)
    shot = tmp_path / "report.png"
    subprocess.run(_chromium_args(tempfile.mkdtemp()) + [
        f"--screenshot={shot}", "--window-size=1280,2000", page.as_uri()],
        capture_output=True, timeout=120)
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000
    assert _png_pixels_vary(data)
    if os.environ.get("DOCGUARD_SAVE_SCREENSHOT"):
        shutil.copy(shot, os.environ["DOCGUARD_SAVE_SCREENSHOT"])
