"""`docguard scan mongodb://...`: the shop fixture loaded into a fresh FerretDB gives the same
findings as `docguard scan` of its mongodump; --sample, --collection, --credentials-file, errors
without the password, and `docguard validator URI NAMESPACE`."""

from __future__ import annotations

import gzip
import json
import subprocess
from pathlib import Path

import bson
import pymongo
import pytest
from bson import json_util

import harness

ROOT = Path(__file__).resolve().parents[3]
SHOP_DUMP = ROOT / "tests" / "fixtures" / "dumps" / "shop" / "dir-gzip"


def _docguard(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([str(harness.docguard_bin()), *args], capture_output=True, text=True,
                          timeout=timeout)


def _load_dump(client: pymongo.MongoClient, dump_dir: Path) -> None:
    """Every collection of the dump's one database, with its indexes (but _id_), as mongorestore
    would restore them."""
    for metadata_path in sorted(dump_dir.glob("*/*.metadata.json.gz")):
        db_name = metadata_path.parent.name
        name = metadata_path.name[: -len(".metadata.json.gz")]
        with gzip.open(metadata_path, "rt") as f:
            metadata = json_util.loads(f.read())
        collection = client[db_name][name]
        with gzip.open(metadata_path.parent / f"{name}.bson.gz", "rb") as f:
            batch = []
            for doc in bson.decode_file_iter(f):
                batch.append(doc)
                if len(batch) == 500:
                    collection.insert_many(batch, ordered=True)
                    batch = []
            if batch:
                collection.insert_many(batch, ordered=True)
        for index in metadata.get("indexes", []):
            if index["name"] == "_id_":
                continue
            options = {k: v for k, v in index.items() if k not in ("v", "key", "ns")}
            collection.create_index(list(index["key"].items()), **options)


@pytest.fixture(scope="module")
def shop(tmp_path_factory):
    """A FerretDB of its own holding only the `shop` database of the fixture dump."""
    workdir = tmp_path_factory.mktemp("live-scan")
    fdb = harness.start_ferretdb(workdir)
    uri = f"mongodb://127.0.0.1:{fdb.ports['listen']}"
    client = pymongo.MongoClient(uri, directConnection=True, serverSelectionTimeoutMS=10000)
    try:
        _load_dump(client, SHOP_DUMP)
        yield uri
    finally:
        client.close()
        fdb.stop()


def _findings(report: dict) -> set[tuple]:
    return {(f["db"], f["collection"], f["kind"], f["field"], f["severity"])
            for f in report["findings"]}


def _scan_json(*args: str) -> dict:
    result = _docguard("scan", *args, "--format", "json")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_live_scan_finds_what_the_dump_scan_finds(shop):
    live = _scan_json(f"{shop}/shop")
    dump = _scan_json(str(SHOP_DUMP))
    assert _findings(dump), "the fixture should give findings"
    assert _findings(live) == _findings(dump)
    assert live["source"] == f"{shop}/shop"
    by_name = {c["collection"]: c for c in live["collections"]}
    assert set(by_name) == {c["collection"] for c in dump["collections"]}
    for collection in dump["collections"]:
        mine = by_name[collection["collection"]]
        assert mine["documents"] == collection["documents"], collection["collection"]
        assert mine["indexes"] == collection["indexes"], collection["collection"]
        assert mine["sample_method"] == "all"
        assert mine["metadata_source"] == "cluster"
    # Findings from a cluster name what they rest on.
    assert {f["source"] for f in live["findings"]} <= {"sample", "metadata"}


def test_sample_reports_the_method(shop):
    report = _scan_json(f"{shop}/shop", "--sample", "50", "--quiet")
    for collection in report["collections"]:
        # FerretDB 1.24 has no $sample (NotImplemented): find with a limit reads instead.
        assert collection["sample_method"] in ("$sample", "find"), collection
        assert collection["documents"] <= 50, collection
    methods = {c["sample_method"] for c in report["collections"]}
    assert methods == {"find"}, "FerretDB 1.24 refuses $sample; the reader falls back to find"
    text = _docguard("scan", f"{shop}/shop", "--sample", "50", "--quiet")
    assert text.returncode == 0, text.stderr
    assert "sampled by find" in text.stdout


def test_collection_limits_the_scan(shop):
    report = _scan_json(shop, "--db", "shop", "--collection", "products", "--quiet")
    assert [(c["db"], c["collection"]) for c in report["collections"]] == [("shop", "products")]
    assert {f["collection"] for f in report["findings"]} <= {"products"}
    assert report["collections"][0]["documents"] == 300


def test_progress_and_summary_on_stderr(shop):
    result = _docguard("scan", f"{shop}/shop", "--format", "json")
    assert result.returncode == 0, result.stderr
    assert "scan: read 7 collections" in result.stderr, result.stderr
    json.loads(result.stdout)  # stdout is the report alone


def test_unreachable_uri_is_exit_2_without_the_password():
    port = harness.free_port()
    result = _docguard("scan", f"mongodb://scanner:s3cr3t-pw@127.0.0.1:{port}/shop"
                               "?serverSelectionTimeoutMS=500", timeout=60)
    assert result.returncode == 2
    assert f"mongodb://scanner:****@127.0.0.1:{port}/shop" in result.stderr, result.stderr
    assert "s3cr3t-pw" not in result.stderr + result.stdout
    bad = _docguard("scan", "mongodb://scanner:s3cr3t-pw@/shop")
    assert bad.returncode == 2
    assert "invalid URI" in bad.stderr, bad.stderr
    assert "s3cr3t-pw" not in bad.stderr + bad.stdout


def test_validator_from_the_cluster(shop):
    result = _docguard("validator", f"{shop}/shop", "shop.products")
    assert result.returncode == 0, result.stderr
    assert "collMod" in result.stdout and "$jsonSchema" in result.stdout
    from_dump = _docguard("validator", str(SHOP_DUMP), "shop.products")
    assert from_dump.returncode == 0, from_dump.stderr
    assert result.stdout == from_dump.stdout
    missing = _docguard("validator", f"{shop}/shop", "shop.nope")
    assert missing.returncode == 2
    assert "no collection shop.nope" in missing.stderr, missing.stderr


def test_credentials_file(auth_env, tmp_path):
    """SCRAM with the user and password from a file, never in the report or the messages."""
    client = pymongo.MongoClient(auth_env.uri, username=auth_env.user,
                                 password=auth_env.password, serverSelectionTimeoutMS=10000)
    try:
        client["live_scan_auth"]["things"].insert_many([{"_id": i, "n": i} for i in range(10)])
        credentials = tmp_path / "credentials"
        credentials.write_text(f"user: {auth_env.user}\npassword: {auth_env.password}\n")
        target = f"{auth_env.uri.rstrip('/')}/live_scan_auth?authSource=admin"
        result = _docguard("scan", target, "--credentials-file", str(credentials), "--format",
                           "json")
        assert result.returncode == 0, result.stderr
        report = json.loads(result.stdout)
        assert [c["documents"] for c in report["collections"]] == [10]
        assert auth_env.password not in result.stdout + result.stderr

        credentials.write_text(f"user: {auth_env.user}\npassword: wrong-{auth_env.password}\n")
        refused = _docguard("scan", target, "--credentials-file", str(credentials))
        assert refused.returncode == 2
        assert "uthentication failed" in refused.stderr, refused.stderr
        assert auth_env.password not in refused.stderr + refused.stdout
    finally:
        client.drop_database("live_scan_auth")
        client.close()
