"""Server features FerretDB 1.24 lacks, supplied by the replica-set double (rs_double.py).

The double stays a relay: these answer only the exact request shapes listed here and pass
everything else to FerretDB, which answers (or refuses) it as it would without the double.

What FerretDB v1.24.2 (SQLite handler) answers by itself, checked with PyMongo 4.20:
- aggregate [{$sample: {size: N}}] and [{$indexStats: {}}]: code 238 NotImplemented
  ('`aggregate` stage "$sample" is not implemented yet').
- aggregate [{$collStats: {storageStats: {}}}]: answered, one document {ns, host, localTime,
  storageStats: {size, count, avgObjSize, storageSize, freeStorageSize, capped, nindexes,
  indexDetails: {}, indexBuilds: {}, totalIndexSize, totalSize, indexSizes, scaleFactor}};
  storageStats.scale works. Differences from a server: localTime is a string, not a date, and
  storageStats.size equals totalSize (data + indexes) instead of the data size. {count: {}} gives
  {count}; {latencyStats: {}} is accepted but adds nothing. A missing collection: code 26.
- collStats: answered {ns, size, count, avgObjSize, storageSize, freeStorageSize, nindexes,
  totalIndexSize, totalSize, indexSizes, scaleFactor, capped, ok}; here size equals storageSize
  (the table on disk); `scale` divides the sizes but scaleFactor stays 1. A missing collection:
  ok with zeros and no avgObjSize.
  Both statistics are therefore relayed unchanged: the double does not answer them.
- create with `validator`, and collMod: 238. listCollections: `options` is always {}; the whole
  list comes in one batch (cursor.batchSize is ignored, cursor id 0); nameOnly gives only {name}.

What the double supplies (Features, one per double, shared by all members):
- Validators: set_validator(ns, validator, level, action) makes listCollections replies (any
  member, any filter FerretDB evaluated) show options.validator / validationLevel /
  validationAction on that collection's entry, as `create`/`collMod` with a validator would on a
  server. NOT enforced: writes that break it succeed. Entries only appear for collections that
  exist upstream; nameOnly replies are left alone (a server shows no options there either);
  a filter on options.* is evaluated by FerretDB against its own empty options.
- $sample (enable_sample(True); off by default so a client's fallback can be tested against the
  real FerretDB answer): an aggregate whose pipeline is exactly [{$sample: {size: N}}] is answered
  with a `find` limited to N on the client's own upstream connection (so it runs with that
  connection's authentication). The reply is that find's cursor renamed as the aggregate's, so a
  result larger than one batch (FerretDB caps a batch at 16 MiB) continues with getMore against
  FerretDB's cursor, which lives as long as the client's connection. NOT random: the first N
  documents in FerretDB's natural order. size 0 gives an empty result; a malformed size gets the
  server's errors (28745-28749).
- $indexStats: set_index_stats(ns, {index name: ops}, member=None) and an aggregate whose pipeline
  is [{$indexStats: {}}] (optionally followed by $match stages of plain equalities, the only
  follow-up stage evaluated here) is answered with one document per index listIndexes gives:
  {name, key, host (the member's address), accesses: {ops: Int64, since: date}, spec}. ops come
  from the member's own table, else the one for every member, else 0; `since` is when the table
  was set (or when the double started). Other follow-up stages: 238 NotImplemented from the double.
"""

from __future__ import annotations

import datetime
from typing import Awaitable, Callable

from bson.int64 import Int64

Upstream = Callable[[dict], Awaitable[dict]]  # runs one command on the client's upstream connection

VALIDATION_LEVELS = ("off", "strict", "moderate")
VALIDATION_ACTIONS = ("error", "warn", "errorAndLog")


def _now() -> datetime.datetime:
    # BSON dates have millisecond precision: compare equal after a round trip.
    now = datetime.datetime.now(datetime.timezone.utc)
    return now.replace(microsecond=now.microsecond // 1000 * 1000)


def _split_ns(ns: str) -> tuple[str, str]:
    db, dot, coll = ns.partition(".")
    if not db or not dot or not coll:
        raise ValueError(f"not a namespace (db.collection): {ns!r}")
    return db, coll


def _error(code: int, code_name: str, msg: str) -> dict:
    return {"ok": 0.0, "errmsg": msg, "code": code, "codeName": code_name}


def _path(doc, dotted: str):
    for part in dotted.split("."):
        if not isinstance(doc, dict) or part not in doc:
            return None
        doc = doc[part]
    return doc


class Features:
    def __init__(self):
        self.validators: dict[str, dict] = {}       # ns -> {validator, validationLevel, ...}
        self.sample = False
        # (ns, member index or None for every member) -> ({index name: ops}, since)
        self.index_stats: dict[tuple[str, int | None], tuple[dict[str, int], datetime.datetime]] = {}
        self.started = _now()

    # ---------------------------------------------------------------- control
    def set_validator(self, ns: str, validator: dict | None, level: str = "strict",
                      action: str = "error") -> None:
        """Show `validator` in listCollections for ns; None removes it."""
        _split_ns(ns)
        if validator is None:
            self.validators.pop(ns, None)
            return
        if not isinstance(validator, dict):
            raise ValueError("a validator is a document")
        if level not in VALIDATION_LEVELS or action not in VALIDATION_ACTIONS:
            raise ValueError(f"validationLevel one of {VALIDATION_LEVELS}, "
                             f"validationAction one of {VALIDATION_ACTIONS}")
        self.validators[ns] = {"validator": validator, "validationLevel": level,
                               "validationAction": action}

    def enable_sample(self, on: bool = True) -> None:
        self.sample = bool(on)

    def set_index_stats(self, ns: str, ops: dict[str, int] | None, member: int | None = None) -> None:
        """accesses.ops per index name for ns (on one member, or every member); None removes."""
        _split_ns(ns)
        if ops is None:
            self.index_stats.pop((ns, member), None)
            return
        self.index_stats[(ns, member)] = ({str(k): int(v) for k, v in ops.items()}, _now())

    def status(self) -> dict:
        return {"sample": self.sample, "validators": sorted(self.validators),
                "index_stats": sorted({ns for ns, _ in self.index_stats})}

    # ---------------------------------------------------------------- requests
    def reply_rewriter(self, name: str, body: dict):
        """A function that rewrites the reply to this request, or None to relay it untouched."""
        if name.lower() != "listcollections" or body.get("nameOnly"):
            return None
        db = body.get("$db")
        if not any(ns.startswith(f"{db}.") for ns in self.validators):
            return None
        return lambda reply: self._add_validators(db, reply)

    def _add_validators(self, db: str, reply: dict) -> dict:
        cursor = reply.get("cursor")
        if not reply.get("ok") or not isinstance(cursor, dict):
            return reply
        for entry in cursor.get("firstBatch") or cursor.get("nextBatch") or []:
            v = self.validators.get(f"{db}.{entry.get('name')}")
            if v and entry.get("type", "collection") == "collection":
                entry["options"] = {**(entry.get("options") or {}), **v}
        return reply

    def wants(self, name: str, body: dict) -> bool:
        """Whether answer() answers this request (else it is relayed)."""
        if name.lower() != "aggregate" or "explain" in body:
            return False
        pipeline = body.get("pipeline")
        if not isinstance(pipeline, list) or not pipeline or not isinstance(pipeline[0], dict):
            return False
        if not isinstance(body[name], str):  # aggregate: 1 has no collection to read
            return False
        if "$indexStats" in pipeline[0]:
            return pipeline[0] == {"$indexStats": {}}
        return self.sample and len(pipeline) == 1 and list(pipeline[0]) == ["$sample"]

    async def answer(self, name: str, body: dict, upstream: Upstream, host: str,
                     member: int) -> dict:
        pipeline = body["pipeline"]
        if "$indexStats" in pipeline[0]:
            return await self._index_stats(body, upstream, host, member)
        return await self._sample(body, upstream)

    async def _sample(self, body: dict, upstream: Upstream) -> dict:
        spec = body["pipeline"][0]["$sample"]
        if not isinstance(spec, dict):
            return _error(28745, "Location28745", "the $sample stage specification must be an object")
        if "size" not in spec:
            return _error(28749, "Location28749", "$sample stage must specify a size")
        extra = [k for k in spec if k != "size"]
        if extra:
            return _error(28748, "Location28748", f"unrecognized option to $sample: {extra[0]}")
        size = spec["size"]
        if isinstance(size, bool) or not isinstance(size, (int, float)):
            return _error(28746, "Location28746", "size argument to $sample must be a number")
        if size < 0:
            return _error(28747, "Location28747", "size argument to $sample must not be negative")
        coll, db = body["aggregate"], body["$db"]
        ns = f"{db}.{coll}"
        if int(size) == 0:  # a find with limit 0 has no limit
            return {"cursor": {"firstBatch": [], "id": Int64(0), "ns": ns}, "ok": 1.0}
        find = {"find": coll, "limit": int(size), "$db": db}
        batch = (body.get("cursor") or {}).get("batchSize")
        if batch is not None:
            find["batchSize"] = batch
        for k in ("lsid", "maxTimeMS", "comment"):
            if k in body:
                find[k] = body[k]
        reply = await upstream(find)
        cursor = reply.get("cursor")
        if reply.get("ok") and isinstance(cursor, dict):
            cursor["ns"] = ns
        return reply

    async def _index_stats(self, body: dict, upstream: Upstream, host: str, member: int) -> dict:
        coll, db = body["aggregate"], body["$db"]
        ns = f"{db}.{coll}"
        matches = []
        for stage in body["pipeline"][1:]:
            m = stage.get("$match") if isinstance(stage, dict) and len(stage) == 1 else None
            if not isinstance(m, dict) or any(k.startswith("$") or (isinstance(v, dict) and any(
                    str(x).startswith("$") for x in v)) for k, v in m.items()):
                return _error(238, "NotImplemented", "rs_double answers $indexStats followed only "
                              "by $match stages of plain equalities")
            matches.append(m)
        specs = []
        reply = await upstream({"listIndexes": coll, "cursor": {}, "$db": db, **(
            {"lsid": body["lsid"]} if "lsid" in body else {})})
        while True:
            if not reply.get("ok"):
                if reply.get("code") == 26:  # a server lists no indexes of a missing collection
                    break
                return reply
            cursor = reply["cursor"]
            specs += cursor.get("firstBatch") or cursor.get("nextBatch") or []
            if not cursor.get("id"):
                break
            reply = await upstream({"getMore": cursor["id"], "collection": coll, "$db": db})
        table, since = self.index_stats.get((ns, member)) or self.index_stats.get((ns, None)) or (
            {}, self.started)
        docs = [{"name": s.get("name"), "key": s.get("key"), "host": host,
                 "accesses": {"ops": Int64(table.get(s.get("name"), 0)), "since": since},
                 "spec": s} for s in specs]
        docs = [d for d in docs if all(_path(d, k) == v for m in matches for k, v in m.items())]
        return {"cursor": {"firstBatch": docs, "id": Int64(0), "ns": ns}, "ok": 1.0}
