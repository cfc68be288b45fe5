"""Unacknowledged (w:0, moreToCome) writes on one pooled connection.

A server must not answer a moreToCome request, but FerretDB 1.x does. docguard drops those replies;
it used to remember only the last 64 unacknowledged request ids, so a client that put more than
that in flight before its next read got a stray reply: PyMongo raised
`ProtocolError: Got response id ... but expected ...` on the read.

Proxy only: FerretDB directly fails these tests the same way (PyMongo reads its stray reply), which
is why docguard must drop them.
"""

from __future__ import annotations

import time

import pymongo
import pytest
from pymongo.write_concern import WriteConcern

pytestmark = pytest.mark.proxy


def _burst_then_read(env, db, count: int) -> None:
    c = env.client(maxPoolSize=1)  # every operation on the same connection
    try:
        coll = c[db.name].get_collection("w0", write_concern=WriteConcern(w=0))
        for i in range(count):
            assert not coll.insert_one({"_id": i, "pad": "x" * 64}).acknowledged
        # A read on the same connection: its reply must be the next thing the driver receives.
        acked = c[db.name].w0
        assert acked.find_one({"_id": -1}) is None
        # Unacknowledged writes are applied in order; wait for the last one, then check them all.
        deadline = time.monotonic() + 10
        while acked.count_documents({}) < count and time.monotonic() < deadline:
            time.sleep(0.05)
        assert acked.count_documents({}) == count
        assert acked.find_one({"_id": count - 1})["pad"] == "x" * 64
        # The connection is still in step: many more acknowledged round trips.
        for i in range(20):
            assert acked.find_one({"_id": i})["_id"] == i
        assert c.admin.command("ping")["ok"] == 1
    finally:
        c.close()


def test_200_unacknowledged_inserts_then_read_on_one_connection(env, db):
    _burst_then_read(env, db, 200)


def test_unacknowledged_bursts_interleaved_with_reads(env, db):
    """Bursts of every size around the old window (64), each followed by a read."""
    c = env.client(maxPoolSize=1)
    try:
        w0 = c[db.name].get_collection("mixed", write_concern=WriteConcern(w=0))
        view = c[db.name].mixed
        n = 0
        for burst in (1, 63, 64, 65, 130, 257):
            for _ in range(burst):
                w0.insert_one({"_id": n})
                n += 1
            assert view.find_one({"_id": -1}) is None
        deadline = time.monotonic() + 10
        while view.count_documents({}) < n and time.monotonic() < deadline:
            time.sleep(0.05)
        assert view.count_documents({}) == n
    except pymongo.errors.ProtocolError as e:  # the defect's symptom, said plainly
        raise AssertionError(f"a reply to a w:0 write reached the driver: {e}") from e
    finally:
        c.close()
