"""A replica-set (or several-mongos) test double in front of ONE MongoDB-compatible server.

Every port is one member; every accepted connection is relayed 1:1 to the upstream (so
"replication" is instant). Only hello/isMaster replies are rewritten (setName, hosts, primary, me,
electionId, setVersion; no topologyVersion, so drivers poll with plain hello; no compression, so
nothing arrives as OP_COMPRESSED). On a non-primary, writes get 10107 NotWritablePrimary (with the
RetryableWriteError label when the command has a txnNumber) and reads without a secondary-capable
$readPreference get 13435 NotPrimaryNoSecondaryOk. A retried write (same lsid + txnNumber) is
answered with the first attempt's reply, as a server's transaction table would, since FerretDB
keeps none. With mongos=True every port is a separate mongos.

Each member records the commands it received (commands(), clear_commands()) so that tests can see
where reads went. What FerretDB lacks and the double supplies (validators shown by listCollections,
$sample, $indexStats) is in double_features.py, with what FerretDB answers by itself; transactions
(session bookkeeping, no atomicity) in double_transactions.py.

In process:   d = RunningDouble("127.0.0.1:27017", ports=[0, 0, 0]); d.elect(1); d.kill(1); d.revive(1)
              d.commands(1, command="find"); d.set_validator("db.c", {...}); d.enable_sample()
CLI:          python rs_double.py --upstream HOST:PORT --ports P1,P2,P3 [--set-name rs0] [--mongos]
              [--control 127.0.0.1:0] [--advertise-host NAME]
              prints one JSON line {"event": "ready", "control": ..., "members": [...]} on stdout,
              then serves the line protocol on the control port (see Control.COMMANDS).
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import struct
import sys
import threading
from typing import Callable

import bson
from bson import ObjectId

from double_features import Features
from double_transactions import Transactions

OP_REPLY, OP_QUERY, OP_MSG = 1, 2004, 2013
MAX_MSG = 48_000_000
HELLO_KEYS = {"hello": "isWritablePrimary", "ismaster": "ismaster"}
WRITES = {"insert", "update", "delete", "findandmodify", "bulkwrite", "create", "drop",
          "dropdatabase", "createindexes", "dropindexes", "deleteindexes", "renamecollection",
          "collmod", "createuser", "updateuser", "dropuser", "dropallusersfromdatabase",
          "committransaction", "converttocapped"}
READS = {"find", "aggregate", "count", "distinct", "listcollections", "listindexes",
         "listdatabases", "dbstats", "collstats", "datasize", "explain"}
# Fields of the upstream's hello reply that describe its own topology: replaced, never passed on.
TOPOLOGY_FIELDS = ("ismaster", "isWritablePrimary", "secondary", "topologyVersion", "compression",
                   "setName", "hosts", "primary", "me", "msg", "electionId", "setVersion",
                   "isreplicaset", "passives", "arbiters", "arbiterOnly", "passive", "hidden")
COMMAND_RECORD = 10_000  # commands remembered per member (the oldest are dropped)
# Commands whose string argument names something other than a collection.
NOT_COLLECTION = {"createuser", "updateuser", "dropuser", "usersinfo", "createrole", "updaterole",
                  "droprole", "rolesinfo", "getparameter", "setparameter", "renamecollection"}


def _command(doc: dict) -> tuple[str, dict]:
    if doc and next(iter(doc)) in ("$query", "query") and isinstance(next(iter(doc.values())), dict):
        doc = next(iter(doc.values()))
    return (next(iter(doc)) if doc else ""), doc


def _collection(name: str, body: dict) -> str | None:
    lname = name.lower()
    if lname == "explain" and isinstance(body.get("explain"), dict):
        return _collection(*_command(body["explain"]))
    value = body.get("collection") if lname == "getmore" else body.get(name)
    return value if isinstance(value, str) and lname not in NOT_COLLECTION else None


def _app_name(hello: dict) -> str | None:
    """The application name a driver sends in its handshake (client.application.name)."""
    app = (hello.get("client") or {}).get("application") if isinstance(hello, dict) else None
    name = app.get("name") if isinstance(app, dict) else None
    return name if isinstance(name, str) else None


def _op_msg_body(msg: bytes) -> tuple[int, dict | None]:
    """(flagBits, kind-0 body) of an OP_MSG; body None if absent or unparsable."""
    flags = struct.unpack_from("<I", msg, 16)[0]
    pos, end = 20, len(msg) - (4 if flags & 1 else 0)
    while pos < end:
        kind, pos = msg[pos], pos + 1
        size = struct.unpack_from("<i", msg, pos)[0]
        if kind == 0:
            return flags, bson.decode(msg[pos:pos + size])
        pos += size
    return flags, None


def _with_body(msg: bytes, body: dict) -> bytes:
    """The OP_MSG `msg` with its kind-0 body replaced, its document sequences kept as they were
    and its checksum dropped (it would no longer match)."""
    flags = struct.unpack_from("<I", msg, 16)[0]
    pos, end = 20, len(msg) - (4 if flags & 1 else 0)
    out = [struct.pack("<I", flags & ~1)]
    while pos < end:
        kind, size = msg[pos], struct.unpack_from("<i", msg, pos + 1)[0]
        out.append(b"\0" + bson.encode(body) if kind == 0 else msg[pos:pos + 1 + size])
        pos += 1 + size
    request_id, response_to = struct.unpack_from("<ii", msg, 4)
    return _frame(request_id, response_to, OP_MSG, b"".join(out))


def _frame(request_id: int, response_to: int, opcode: int, payload: bytes) -> bytes:
    return struct.pack("<iiii", 16 + len(payload), request_id, response_to, opcode) + payload


def _op_msg(request_id: int, response_to: int, doc: dict) -> bytes:
    return _frame(request_id, response_to, OP_MSG, b"\0\0\0\0\0" + bson.encode(doc))


async def _read_msg(reader: asyncio.StreamReader) -> bytes:
    hdr = await reader.readexactly(16)
    length = struct.unpack_from("<i", hdr)[0]
    if not 16 <= length <= MAX_MSG:
        raise ConnectionError(f"bad message length {length}")
    return hdr + await reader.readexactly(length - 16)


class Member:
    def __init__(self, index: int, port: int):
        self.index, self.port = index, port
        self.server: asyncio.base_events.Server | None = None
        self.transports: set[asyncio.BaseTransport] = set()  # of its clients' connections
        self.alive = False
        # command name -> times served (relayed, or answered by the double); hellos excluded
        self.forwarded: dict[str, int] = {}
        self.refused = 0    # commands answered NotWritablePrimary / NotPrimaryNoSecondaryOk
        # Every command received but hellos, oldest first: see ReplicaSetDouble.commands().
        self.commands: collections.deque[dict] = collections.deque(maxlen=COMMAND_RECORD)
        # Seconds each hello/isMaster reply is held back (a slow or distant member): a driver then
        # learns this member's state after the others'.
        self.hello_delay = 0.0


class ReplicaSetDouble:
    """The asyncio server. Control coroutines/methods must run on its event loop."""

    def __init__(self, upstream: str, ports: list[int], set_name: str = "rs0", *,
                 mongos: bool = False, listen_host: str = "127.0.0.1",
                 advertise_host: str | None = None, primary: int | None = 0):
        self.up_host, up_port = upstream.rsplit(":", 1)
        self.up_port = int(up_port)
        self.set_name, self.mongos = set_name, mongos
        self.listen_host, self.advertise_host = listen_host, advertise_host or listen_host
        self.members = [Member(i, p) for i, p in enumerate(ports)]
        self.primary = primary
        self.election = 1
        self.set_version = 1
        self._next_id = 1 << 24
        self.log: list[str] = []
        self._relays: set[asyncio.Task] = set()
        # Retryable writes: (lsid id, txnNumber) -> the reply, like a server's transaction table,
        # so that a write retried after its connection was cut is answered, not applied twice.
        self._txns: dict[tuple[bytes, int], asyncio.Future] = {}
        self.features = Features()  # what FerretDB lacks (double_features.py)
        self.transactions = Transactions()  # double_transactions.py; off until enabled
        self._seq = 0  # numbers the command record across members

    # ---------------------------------------------------------------- topology
    def address(self, m: Member) -> str:
        return f"{self.advertise_host}:{m.port}"

    def member(self, ref) -> Member:
        """A member by index (0-based, int or digit string), by "host:port" or by port."""
        if isinstance(ref, Member):
            return ref
        s = str(ref)
        if s.isdigit() and int(s) < len(self.members):
            return self.members[int(s)]
        for m in self.members:
            if s.rsplit(":", 1)[-1] == str(m.port):
                return m
        raise KeyError(f"no member {ref!r}")

    def status(self) -> dict:
        p = self.primary
        return {"set_name": None if self.mongos else self.set_name, "mongos": self.mongos,
                "primary": None if p is None or self.mongos else self.address(self.members[p]),
                "election_id": str(self._election_id()), "members": [
                    {"index": m.index, "address": self.address(m), "port": m.port, "alive": m.alive,
                     "connections": len(m.transports), "forwarded": dict(m.forwarded),
                     "refused": m.refused,
                     "state": "mongos" if self.mongos else
                     ("primary" if m.index == p else "secondary")} for m in self.members],
                "features": self.features.status()}

    def _election_id(self) -> ObjectId:
        return ObjectId(b"\x7f\xff\xff\xff" + self.election.to_bytes(8, "big"))

    def _event(self, text: str) -> None:
        self.log.append(text)
        print(f"rs_double: {text}", file=sys.stderr, flush=True)

    def elect(self, ref) -> None:
        """Make a member primary (a new election: electionId increases)."""
        m = self.member(ref)
        self.primary, self.election = m.index, self.election + 1
        self._event(f"elected {self.address(m)} (election {self.election})")

    def step_down(self, to=None) -> None:
        """The primary steps down; `to` (or the next live member) wins the election."""
        if to is None:
            n = len(self.members)
            start = -1 if self.primary is None else self.primary
            order = [self.members[(start + k) % n] for k in range(1, n + 1)]
            to = next((m for m in order if m.alive and m.index != self.primary), None)
            if to is None:
                return self.no_primary()
        self.elect(to)

    def no_primary(self) -> None:
        self.primary = None
        self._event("no primary")

    def delay_hello(self, ref, seconds: float) -> None:
        """Hold back this member's hello/isMaster replies by `seconds` (0: none), heartbeats and
        handshakes alike: clients discover it after the other members."""
        seconds = float(seconds)
        if not 0 <= seconds <= 60:
            raise ValueError("a hello delay is 0 to 60 seconds")
        self.member(ref).hello_delay = seconds

    async def kill(self, ref) -> None:
        """Stop listening on the member's port and drop its connections (a crashed process)."""
        m = self.member(ref)
        m.alive = False
        if m.server:
            m.server.close()
            m.server = None
        for t in list(m.transports):
            t.abort()
        m.transports.clear()
        self._event(f"killed {self.address(m)}")

    async def revive(self, ref) -> None:
        m = self.member(ref)
        if not m.alive:
            await self._listen(m)
            self._event(f"revived {self.address(m)}")

    # ---------------------------------------------------------------- command record
    def commands(self, ref=None, **match) -> list[dict]:
        """What members received (hellos excluded), oldest first: one member's, or every member's
        by `seq`. Each entry: {seq, member, command, db, collection (None when the command names
        none), read_preference ($readPreference mode, None when absent), app_name (from the
        connection's handshake, None if it sent none), outcome ("relayed", "refused", or
        "answered" by the double itself)}. Keyword arguments keep entries whose fields equal them,
        e.g. commands(1, command="find", read_preference="secondary")."""
        members = self.members if ref is None else [self.member(ref)]
        found = [c for m in members for c in m.commands
                 if all(c.get(k) == v for k, v in match.items())]
        return sorted(found, key=lambda c: c["seq"]) if ref is None else found

    def clear_commands(self, ref=None) -> None:
        """Forget the record (of one member or all); the `forwarded` counts stay."""
        for m in self.members if ref is None else [self.member(ref)]:
            m.commands.clear()

    def _record(self, m: Member, conn: dict, name: str, body: dict, outcome: str) -> None:
        self._seq += 1
        rp = body.get("$readPreference")
        m.commands.append({"seq": self._seq, "member": m.index, "command": name,
                           "db": body.get("$db"), "collection": _collection(name, body),
                           "read_preference": rp.get("mode") if isinstance(rp, dict) else None,
                           "app_name": conn.get("app_name"), "outcome": outcome})

    # ---------------------------------------------------------------- features
    def set_validator(self, ns: str, validator: dict | None, level: str = "strict",
                      action: str = "error") -> None:
        """listCollections shows this validator on ns (not enforced; None removes it)."""
        self.features.set_validator(ns, validator, level, action)

    def enable_sample(self, on: bool = True) -> None:
        """Answer aggregate [{$sample: {size: N}}] (FerretDB: 238 NotImplemented)."""
        self.features.enable_sample(on)

    def set_index_stats(self, ns: str, ops: dict[str, int] | None, member=None) -> None:
        """$indexStats accesses.ops per index name of ns, on one member or all; None removes."""
        self.features.set_index_stats(ns, ops, None if member is None else self.member(member).index)

    # ---------------------------------------------------------------- serving
    async def start(self) -> None:
        for m in self.members:
            await self._listen(m)

    async def stop(self) -> None:
        for m in self.members:
            await self.kill(m)
        if self._relays:  # let them see their closed sockets and end
            await asyncio.wait(list(self._relays), timeout=5)

    async def _listen(self, m: Member) -> None:
        m.server = await asyncio.start_server(lambda r, w, m=m: self._relay(m, r, w),
                                              self.listen_host, m.port, reuse_address=True)
        m.port = m.server.sockets[0].getsockname()[1]
        m.alive = True

    def _new_id(self) -> int:
        self._next_id = (self._next_id + 1) & 0x7FFFFFFF
        return self._next_id

    async def _relay(self, m: Member, creader, cwriter) -> None:
        if not m.alive:
            cwriter.transport.abort()
            return
        m.transports.add(cwriter.transport)
        self._relays.add(asyncio.current_task())
        uwriter = None
        # requestID -> what to do with the upstream's reply: rewrite a hello (str: the key naming
        # the primary), remember a retryable write ((lsid, txnNumber)), rewrite it (a function of
        # the reply document), or hand it to the double's own request (a Future; not passed on).
        pending: dict[int, str | tuple | asyncio.Future | Callable[[dict], dict]] = {}
        conn: dict = {}  # what the client said in its handshake (app_name)
        try:
            ureader, uwriter = await asyncio.wait_for(
                asyncio.open_connection(self.up_host, self.up_port), 10)
            tasks = [asyncio.ensure_future(self._client_to_upstream(m, creader, cwriter, uwriter,
                                                                    pending, conn)),
                     asyncio.ensure_future(self._upstream_to_client(m, ureader, cwriter, pending))]
            await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
            writes = [self._txns[k] for k in pending.values() if k in self._txns]
            if writes and not tasks[1].done():  # client gone: the upstream still executes them
                await asyncio.wait(writes, timeout=5)
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
        except (OSError, asyncio.TimeoutError, asyncio.IncompleteReadError):
            pass
        finally:
            self._relays.discard(asyncio.current_task())
            m.transports.discard(cwriter.transport)
            for k in pending.values():
                self._txn_done(k, None)
            for w in (cwriter, uwriter):
                if w is not None:
                    w.transport.abort()

    def _txn_done(self, key, reply: dict | None) -> None:
        fut = self._txns.get(key) if isinstance(key, tuple) else None
        if fut is not None and not fut.done():
            fut.set_result(reply)
        if fut is not None and reply is None:
            del self._txns[key]

    async def _client_to_upstream(self, m, creader, cwriter, uwriter, pending, conn) -> None:
        while True:
            msg = await _read_msg(creader)
            request_id, opcode = struct.unpack_from("<i", msg, 4)[0], struct.unpack_from("<i", msg, 12)[0]
            try:
                if opcode == OP_QUERY:
                    ns_end = msg.index(b"\0", 20)
                    if msg[20:ns_end].endswith(b".$cmd"):
                        name, doc = _command(bson.decode(msg[ns_end + 9:ns_end + 9 +
                                                             struct.unpack_from("<i", msg, ns_end + 9)[0]]))
                        if name.lower() in HELLO_KEYS:
                            pending[request_id] = HELLO_KEYS[name.lower()]
                            conn.setdefault("app_name", _app_name(doc))
                elif opcode == OP_MSG:
                    flags, body = _op_msg_body(msg)
                    name = next(iter(body)) if body else ""
                    if name.lower() in HELLO_KEYS:
                        pending[request_id] = HELLO_KEYS[name.lower()]
                        conn.setdefault("app_name", _app_name(body))
                    elif body is not None and not self.mongos and m.index != self.primary:
                        error = self._refusal(name, body)
                        if error:
                            if flags & 2:  # moreToCome: nobody waits for a reply; a server hangs up
                                raise ConnectionError("unacknowledged write on a secondary")
                            m.refused += 1
                            self._record(m, conn, name, body, "refused")
                            cwriter.write(_op_msg(self._new_id(), request_id, error))
                            continue
                    if body is not None and name.lower() not in HELLO_KEYS:
                        m.forwarded[name] = m.forwarded.get(name, 0) + 1
                        if await self._answered_retry(name, body, request_id, cwriter, pending):
                            self._record(m, conn, name, body, "answered")
                            continue
                        txn = self.transactions.step(name, body)
                        if txn is not None and txn[0] == "answer":
                            self._record(m, conn, name, body, "answered")
                            cwriter.write(_op_msg(self._new_id(), request_id, txn[1]))
                            continue
                        if txn is not None:
                            msg = _with_body(msg, txn[1])
                        if self.features.wants(name, body):
                            self._record(m, conn, name, body, "answered")
                            reply = await self._answer(m, name, body, uwriter, pending)
                            cwriter.write(_op_msg(self._new_id(), request_id, reply))
                            continue
                        rewrite = self.features.reply_rewriter(name, body)
                        if rewrite:
                            pending[request_id] = rewrite
                        self._record(m, conn, name, body, "relayed")
            except (ValueError, IndexError, struct.error, bson.errors.BSONError):
                pass  # not ours to judge: the upstream answers malformed messages
            uwriter.write(msg)
            await uwriter.drain()

    async def _answer(self, m: Member, name: str, body: dict, uwriter, pending) -> dict:
        """The double's own reply to a request FerretDB cannot answer (double_features.py)."""
        async def upstream(doc: dict) -> dict:
            # On the client's own upstream connection: its authentication applies, and cursors
            # FerretDB opens live as long as the client's connection.
            request_id = self._new_id()
            pending[request_id] = reply = asyncio.get_running_loop().create_future()
            try:
                uwriter.write(_op_msg(request_id, 0, doc))
                await uwriter.drain()
                return await asyncio.wait_for(reply, 30)
            finally:
                pending.pop(request_id, None)
        try:
            return await self.features.answer(name, body, upstream, self.address(m), m.index)
        except (ValueError, KeyError, TypeError, bson.errors.BSONError) as e:
            self._event(f"could not answer {name}: {e!r}")
            return {"ok": 0.0, "errmsg": f"rs_double: {e!r}", "code": 1, "codeName": "InternalError"}

    async def _answered_retry(self, name, body, request_id, cwriter, pending) -> bool:
        """Remember a retryable write; answer its retry with the first attempt's reply."""
        lsid = body.get("lsid")
        if (name.lower() not in WRITES or "txnNumber" not in body or "autocommit" in body
                or not isinstance(lsid, dict) or "id" not in lsid):
            return False
        key = (bytes(lsid["id"]), int(body["txnNumber"]))
        fut = self._txns.get(key)
        if fut is not None:
            try:
                reply = await asyncio.wait_for(asyncio.shield(fut), 10)
            except asyncio.TimeoutError:
                reply = None
            if reply is not None:
                self._event(f"retry of txnNumber {key[1]} answered with the first attempt's reply")
                cwriter.write(_op_msg(self._new_id(), request_id, reply))
                return True
        self._txns[key] = asyncio.get_running_loop().create_future()
        while len(self._txns) > 100_000:
            self._txns.pop(next(iter(self._txns)))
        pending[request_id] = key
        return False

    def _refusal(self, name: str, body: dict) -> dict | None:
        lname = name.lower()
        if lname == "aggregate" and any(isinstance(s, dict) and ("$out" in s or "$merge" in s)
                                        for s in body.get("pipeline") or []):
            lname = "insert"
        if lname in WRITES:
            err = {"ok": 0.0, "errmsg": "not primary", "code": 10107,
                   "codeName": "NotWritablePrimary"}
            if "txnNumber" in body:
                err["errorLabels"] = ["RetryableWriteError"]
            return err
        rp = body.get("$readPreference")
        if lname in READS and not (isinstance(rp, dict) and rp.get("mode", "primary") != "primary"):
            return {"ok": 0.0, "errmsg": "not primary and secondaryOk=false", "code": 13435,
                    "codeName": "NotPrimaryNoSecondaryOk"}
        return None

    async def _upstream_to_client(self, m, ureader, cwriter, pending) -> None:
        while True:
            msg = await _read_msg(ureader)
            response_to, opcode = struct.unpack_from("<ii", msg, 8)
            key = pending.pop(response_to, None)
            if isinstance(key, asyncio.Future) or callable(key):
                try:
                    reply = _op_msg_body(msg)[1] if opcode == OP_MSG else None
                except (ValueError, IndexError, struct.error, bson.errors.BSONError):
                    reply = None
                if isinstance(key, asyncio.Future):  # the double's own request: not passed on
                    if not key.done():
                        key.set_result(reply or {"ok": 0.0, "errmsg": "unreadable upstream reply",
                                                 "code": 1, "codeName": "InternalError"})
                    continue
                if reply is not None:
                    request_id = struct.unpack_from("<i", msg, 4)[0]
                    msg = _op_msg(request_id, response_to, key(reply))
            elif isinstance(key, tuple):
                try:
                    reply = _op_msg_body(msg)[1] if opcode == OP_MSG else None
                except (ValueError, IndexError, struct.error, bson.errors.BSONError):
                    reply = None
                self._txn_done(key, reply if reply and reply.get("ok") else None)
            elif key is not None:
                try:
                    msg = self._rewrite_hello(m, msg, opcode, key)
                except (ValueError, IndexError, struct.error, bson.errors.BSONError):
                    pass
                if m.hello_delay:
                    await asyncio.sleep(m.hello_delay)
            cwriter.write(msg)
            await cwriter.drain()

    def _rewrite_hello(self, m: Member, msg: bytes, opcode: int, key: str) -> bytes:
        if opcode == OP_REPLY:
            doc = bson.decode(msg[36:36 + struct.unpack_from("<i", msg, 36)[0]])
        elif opcode == OP_MSG:
            doc = _op_msg_body(msg)[1]
        else:
            return msg
        if not doc or not doc.get("ok"):
            return msg
        ok = doc.pop("ok")
        for f in TOPOLOGY_FIELDS:
            doc.pop(f, None)
        out: dict = {key: self.mongos or m.index == self.primary}
        if self.mongos:
            out["msg"] = "isdbgrid"
        else:
            out["secondary"] = m.index != self.primary
            out["setName"] = self.set_name
            out["setVersion"] = self.set_version
            out["hosts"] = [self.address(x) for x in self.members]
            if self.primary is not None:
                out["primary"] = self.address(self.members[self.primary])
            out["me"] = self.address(m)
            if m.index == self.primary:
                out["electionId"] = self._election_id()
        out.update(doc)
        out["ok"] = ok
        request_id = struct.unpack_from("<i", msg, 4)[0]
        response_to = struct.unpack_from("<i", msg, 8)[0]
        if opcode == OP_REPLY:
            return _frame(request_id, response_to, OP_REPLY,
                          struct.pack("<iqii", 0, 0, 0, 1) + bson.encode(out))
        return _op_msg(request_id, response_to, out)


class Control:
    """Line protocol: one command per line, one answer line: `ok <status JSON>` or `err <text>`.

    Members are named by index (0-based), host:port or port. Any command answers with the status,
    except `commands`, which answers `ok <JSON list>` (ReplicaSetDouble.commands(), filtered by
    FIELD=VALUE words, e.g. `commands 1 command=find read_preference=secondary`; VALUE null
    matches a field that is None). JSON arguments are plain JSON and may contain spaces:
      validator NS JSON [LEVEL [ACTION]]   JSON: the validator document, or null to remove it
      indexstats NS JSON [M]               JSON: {"index name": ops, ...}, or null to remove
      sample on|off
      hellodelay M SECONDS   hold back member M's hello replies (0: none)
    """
    COMMANDS = ("status", "elect M", "stepdown [M]", "noprimary", "kill M", "revive M",
                "killprimary", "commands [M] [FIELD=VALUE...]", "clearcommands [M]",
                "validator NS JSON [LEVEL [ACTION]]", "indexstats NS JSON [M]", "sample on|off",
                "hellodelay M SECONDS", "quit")

    def __init__(self, double: ReplicaSetDouble, on_quit=None):
        self.d, self.on_quit = double, on_quit

    @staticmethod
    def _json_then_words(text: str) -> tuple[object, list[str]]:
        value, end = json.JSONDecoder().raw_decode(text.strip())
        return value, text.strip()[end:].split()

    async def execute(self, line: str) -> str:
        words = line.split()
        if not words:
            return "err empty command"
        cmd, args = words[0].lower(), words[1:]
        try:
            if cmd == "commands":
                member = args[0] if args and "=" not in args[0] else None
                match = dict(a.split("=", 1) for a in args[1 if member is not None else 0:])
                for k, v in match.items():
                    match[k] = None if v == "null" else int(v) if k in ("member", "seq") else v
                return "ok " + json.dumps(self.d.commands(member, **match))
            if cmd in ("validator", "indexstats") and len(args) >= 2:
                value, rest = self._json_then_words(line.split(None, 2)[2])
                if cmd == "validator" and len(rest) <= 2:
                    self.d.set_validator(args[0], value, *rest)
                elif cmd == "indexstats" and len(rest) <= 1:
                    self.d.set_index_stats(args[0], value, *rest)
                else:
                    return "err usage: " + " | ".join(self.COMMANDS)
            elif cmd == "clearcommands" and len(args) <= 1:
                self.d.clear_commands(*args)
            elif cmd == "sample" and args in (["on"], ["off"]):
                self.d.enable_sample(args[0] == "on")
            elif cmd == "elect" and len(args) == 1:
                self.d.elect(args[0])
            elif cmd == "stepdown" and len(args) <= 1:
                self.d.step_down(args[0] if args else None)
            elif cmd == "noprimary" and not args:
                self.d.no_primary()
            elif cmd == "hellodelay" and len(args) == 2:
                self.d.delay_hello(args[0], args[1])
            elif cmd in ("kill", "revive") and len(args) == 1:
                await getattr(self.d, cmd)(args[0])
            elif cmd == "killprimary" and not args:
                if self.d.primary is None:
                    return "err no primary"
                await self.d.kill(self.d.primary)
            elif cmd == "quit" and self.on_quit:
                self.on_quit()
            elif cmd != "status":
                return "err usage: " + " | ".join(self.COMMANDS)
        except (KeyError, OSError, ValueError, TypeError) as e:
            return f"err {e}"
        return "ok " + json.dumps(self.d.status())

    async def serve_client(self, reader, writer) -> None:
        try:
            while line := await reader.readline():
                writer.write((await self.execute(line.decode(errors="replace")) + "\n").encode())
                await writer.drain()
        except (OSError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()


class RunningDouble:
    """A ReplicaSetDouble on its own event-loop thread, with blocking control methods (pytest)."""

    def __init__(self, upstream: str, ports: list[int] | int = 3, set_name: str = "rs0", **kw):
        ports = [0] * ports if isinstance(ports, int) else ports
        self.double = ReplicaSetDouble(upstream, ports, set_name, **kw)
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="rs_double", daemon=True)
        self.thread.start()
        try:
            self._call(self.double.start())
        except BaseException:
            self.close()
            raise

    def _call(self, coro, timeout: float = 10.0):
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    async def _sync(self, fn, *args):
        return fn(*args)

    @property
    def addresses(self) -> list[str]:
        return [self.double.address(m) for m in self.double.members]

    def uri(self, **options) -> str:
        """mongodb://all members/?replicaSet=... (or the mongos list), plus options."""
        opts = {} if self.double.mongos else {"replicaSet": self.double.set_name}
        opts.update(options)
        return "mongodb://" + ",".join(self.addresses) + "/?" + "&".join(
            f"{k}={v}" for k, v in opts.items())

    def status(self) -> dict:
        return self._call(self._sync(self.double.status))

    def elect(self, member) -> None:
        self._call(self._sync(self.double.elect, member))

    def step_down(self, to=None) -> None:
        self._call(self._sync(self.double.step_down, to))

    def no_primary(self) -> None:
        self._call(self._sync(self.double.no_primary))

    def delay_hello(self, member, seconds: float) -> None:
        self._call(self._sync(self.double.delay_hello, member, seconds))

    def kill(self, member) -> None:
        self._call(self.double.kill(member))

    def revive(self, member) -> None:
        self._call(self.double.revive(member))

    @property
    def primary(self) -> str | None:
        return self.status()["primary"]

    def commands(self, member=None, **match) -> list[dict]:
        """The command record (ReplicaSetDouble.commands)."""
        return self._call(self._sync(lambda: self.double.commands(member, **match)))

    def clear_commands(self, member=None) -> None:
        self._call(self._sync(self.double.clear_commands, member))

    def set_validator(self, ns: str, validator: dict | None, level: str = "strict",
                      action: str = "error") -> None:
        self._call(self._sync(self.double.set_validator, ns, validator, level, action))

    def enable_sample(self, on: bool = True) -> None:
        self._call(self._sync(self.double.enable_sample, on))

    def set_index_stats(self, ns: str, ops: dict[str, int] | None, member=None) -> None:
        self._call(self._sync(self.double.set_index_stats, ns, ops, member))

    def enable_transactions(self, on: bool = True) -> None:
        """Transactions' session bookkeeping (double_transactions.py); off by default."""
        def enable():
            self.double.transactions.enabled = on
        self._call(self._sync(enable))

    def transaction_log(self) -> list[dict]:
        return self._call(self._sync(self.double.transactions.log))

    def close(self) -> None:
        if self.loop.is_running():
            self._call(self.double.stop())
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(10)
            if not self.thread.is_alive():
                self.loop.close()


async def _main(a) -> int:
    ports = [int(p) for p in a.ports.split(",")]
    d = ReplicaSetDouble(a.upstream, ports, a.set_name, mongos=a.mongos, listen_host=a.listen_host,
                         advertise_host=a.advertise_host, primary=a.primary)
    await d.start()
    done = asyncio.Event()
    control = Control(d, on_quit=done.set)
    chost, cport = a.control.rsplit(":", 1)
    server = await asyncio.start_server(control.serve_client, chost, int(cport))
    caddr = "%s:%d" % server.sockets[0].getsockname()[:2]
    print(json.dumps({"event": "ready", "control": caddr, **d.status()}), flush=True)
    loop = asyncio.get_running_loop()
    for sig in ("SIGINT", "SIGTERM"):
        import signal
        loop.add_signal_handler(getattr(signal, sig), done.set)
    await done.wait()
    server.close()
    await d.stop()
    return 0


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--upstream", required=True, help="HOST:PORT of the real server")
    ap.add_argument("--ports", required=True, help="comma-separated member ports (0 = any free)")
    ap.add_argument("--set-name", default="rs0")
    ap.add_argument("--mongos", action="store_true", help="each port is a separate mongos")
    ap.add_argument("--listen-host", default="127.0.0.1")
    ap.add_argument("--advertise-host", help="host name in hosts/me/primary (default listen host)")
    ap.add_argument("--primary", type=int, default=0, help="index of the first primary")
    ap.add_argument("--control", default="127.0.0.1:0", help="HOST:PORT of the control listener")
    sys.exit(asyncio.run(_main(ap.parse_args())))
