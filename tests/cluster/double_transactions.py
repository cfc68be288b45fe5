"""Multi-document transactions, which FerretDB 1.24 lacks (it refuses `startTransaction` and
`autocommit`), as the replica-set double supplies them: the session bookkeeping a server keeps,
without atomicity or isolation.

What a server does, and the double models (the server's session catalog and transaction
participant; codes from the server's error codes list):
- Every statement of a transaction carries lsid, txnNumber and autocommit: false; the first also
  startTransaction: true. commitTransaction and abortTransaction run against the admin database
  with the same lsid and txnNumber.
- A txnNumber lower than the session's highest is refused: 225 TransactionTooOld. This is what a
  replay that shares one live session between recorded sessions runs into.
- A statement, commit or abort of a transaction that is not in progress at that number: 251
  NoSuchTransaction, with the TransientTransactionError label (a commit of one already committed
  is answered ok: commit is retryable). A second startTransaction at a number already used is
  refused with 251 here (the server's own code for it is not modelled).

What the double does NOT do: the statements are relayed to FerretDB at once, without the
transaction fields (readConcern dropped from the first too), so their writes are applied when
they arrive and an abort undoes nothing. Tests read what was sent and in which order (log()),
not isolation.

Enabled per double (enable_transactions()); off by default, so that FerretDB's own refusal can
still be tested.
"""

from __future__ import annotations

TXN_FIELDS = ("txnNumber", "autocommit", "startTransaction")
ENDS = {"committransaction": "committed", "aborttransaction": "aborted"}
LOG_LIMIT = 10_000


def _error(code: int, code_name: str, msg: str, transient: bool = False) -> dict:
    err = {"ok": 0.0, "errmsg": msg, "code": code, "codeName": code_name}
    if transient:
        err["errorLabels"] = ["TransientTransactionError"]
    return err


class Transactions:
    def __init__(self) -> None:
        self.enabled = False
        # lsid id -> {"txn": highest txnNumber, "state": "open" | "committed" | "aborted"}
        self.sessions: dict[bytes, dict] = {}
        self._log: list[dict] = []

    def log(self) -> list[dict]:
        """Every transaction command, oldest first: {lsid (hex), txnNumber, command, outcome
        ("relayed", "committed", "aborted" or the error's codeName)}."""
        return list(self._log)

    def step(self, name: str, body: dict) -> tuple[str, dict] | None:
        """None: not a transaction command, relay as is. ("answer", reply): the double answers.
        ("relay", body): relay this body (the transaction fields removed) instead."""
        lname = name.lower()
        if not self.enabled or ("autocommit" not in body and lname not in ENDS):
            return None
        lsid, txn = body.get("lsid"), body.get("txnNumber")
        if not isinstance(lsid, dict) or "id" not in lsid or not isinstance(txn, int):
            return None  # not a well-formed transaction command: FerretDB answers it
        key = bytes(lsid["id"])
        kind, doc = self._judge(lname, key, int(txn), body)
        outcome = doc.get("codeName", "relayed") if kind == "answer" and not doc.get("ok") else (
            ENDS.get(lname, "relayed"))
        self._log.append({"lsid": key.hex(), "txnNumber": int(txn), "command": name,
                          "outcome": outcome})
        del self._log[:-LOG_LIMIT]
        return kind, doc

    def _judge(self, lname: str, key: bytes, txn: int, body: dict) -> tuple[str, dict]:
        s = self.sessions.get(key)
        if s is not None and txn < s["txn"]:
            return "answer", _error(225, "TransactionTooOld",
                                    f"Cannot start transaction {txn} on session {key.hex()} "
                                    f"because a newer transaction {s['txn']} has already started.")
        if body.get("startTransaction") is True:
            if s is not None and txn == s["txn"]:
                return "answer", _error(251, "NoSuchTransaction",
                                        f"Transaction {txn} has already been started", True)
            self.sessions[key] = {"txn": txn, "state": "open"}
            stripped = {k: v for k, v in body.items() if k not in TXN_FIELDS and k != "readConcern"}
            return "relay", stripped
        if lname in ENDS:
            if s is not None and s["txn"] == txn and s["state"] == "open":
                s["state"] = ENDS[lname]
                return "answer", {"ok": 1.0}
            if s is not None and s["txn"] == txn and s["state"] == ENDS[lname] == "committed":
                return "answer", {"ok": 1.0}
        elif s is not None and s["txn"] == txn and s["state"] == "open":
            return "relay", {k: v for k, v in body.items() if k not in TXN_FIELDS}
        return "answer", _error(251, "NoSuchTransaction",
                                f"Given transaction number {txn} does not match any in-progress "
                                "transactions.", True)
