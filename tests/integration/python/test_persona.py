"""The personas: a driver given `replicaSet=NAME` discovers only docguard (replica_set, the
default); `persona: {type: mongos}` stays available for applications that want a mongos.

With `persona: {type: replica_set}`, docguard answers hello as the primary of a one-member set
whose only host is its own advertised address. PyMongo's discovery then never learns an upstream
address, and retryable writes, sessions and read preferences keep working.
"""

from __future__ import annotations

import pymongo
import pytest

import harness

pytestmark = pytest.mark.proxy


def test_replica_set_persona_hides_the_upstream(env, tmp_path):
    cfg = tmp_path / "persona.yaml"
    cfg.write_text("persona: { type: replica_set, replica_set_name: dgset }\n")
    # The advertised address defaults to the listen address the harness passes as a flag.
    dg = harness.start_docguard(env.ferret_uri, tmp_path, config=cfg)
    try:
        port = dg.ports["listen"]
        client = pymongo.MongoClient(f"mongodb://127.0.0.1:{port}/?replicaSet=dgset",
                                     serverSelectionTimeoutMS=5000, retryWrites=True)
        try:
            coll = client.persona_db.items
            coll.insert_one({"_id": 1, "x": 1})
            with client.start_session() as session:
                assert coll.find_one({"_id": 1}, session=session)["x"] == 1
            assert client.persona_db.command("ping")["ok"] == 1
            desc = client.topology_description
            assert desc.topology_type_name == "ReplicaSetWithPrimary"
            assert desc.replica_set_name == "dgset"
            addresses = {sd.address for sd in desc.server_descriptions().values()}
            assert addresses == {("127.0.0.1", port)}, addresses
            assert client.primary == ("127.0.0.1", port)
            client.persona_db.drop_collection("items")
        finally:
            client.close()
    finally:
        dg.stop()


def test_mongos_persona_still_available(env, tmp_path):
    cfg = tmp_path / "mongos.yaml"
    cfg.write_text("persona: { type: mongos }\n")
    dg = harness.start_docguard(env.ferret_uri, tmp_path, config=cfg)
    try:
        port = dg.ports["listen"]
        client = pymongo.MongoClient(f"mongodb://127.0.0.1:{port}/", serverSelectionTimeoutMS=5000)
        try:
            hello = client.admin.command("hello")
            assert hello["msg"] == "isdbgrid"
            for leaked in ("hosts", "setName", "primary", "me"):
                assert leaked not in hello, leaked
            client.persona_db.items.insert_one({"m": 1})
            assert client.topology_description.topology_type_name == "Sharded"
            assert {sd.address for sd in client.topology_description.server_descriptions().values()} \
                == {("127.0.0.1", port)}
            client.persona_db.drop_collection("items")
        finally:
            client.close()
    finally:
        dg.stop()


def test_default_persona_is_replica_set(env, tmp_path):
    """No persona configured: a driver without replicaSet= discovers a one-member set whose only
    member is docguard (FerretDB's own suite passes through it as directly)."""
    dg = harness.start_docguard(env.ferret_uri, tmp_path, config=None)
    try:
        port = dg.ports["listen"]
        client = pymongo.MongoClient(f"mongodb://127.0.0.1:{port}/", serverSelectionTimeoutMS=5000)
        try:
            hello = client.admin.command("hello")
            assert hello["setName"] == "docguard" and "msg" not in hello
            assert hello["hosts"] == [f"127.0.0.1:{port}"]
            client.persona_db.items.insert_one({"d": 1})
            desc = client.topology_description
            assert desc.topology_type_name == "ReplicaSetWithPrimary"
            assert {sd.address for sd in desc.server_descriptions().values()} == {("127.0.0.1", port)}
            client.persona_db.drop_collection("items")
        finally:
            client.close()
    finally:
        dg.stop()
