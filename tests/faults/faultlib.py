"""Helpers for the fault-injection suite: wire-message builders (OP_MSG with CRC-32C,
OP_COMPRESSED), raw-socket helpers, a scriptable stub upstream, /proc memory readings and a
docguard wrapper with metrics/log helpers.

Everything listens on 127.0.0.1 only and every wait is bounded.
"""

from __future__ import annotations

import os
import signal
import socket
import struct
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import bson

import harness  # tests/integration/python (put on sys.path by conftest.py)

OP_REPLY, OP_QUERY, OP_COMPRESSED, OP_MSG = 1, 2004, 2012, 2013


# ---------------------------------------------------------------- CRC-32C (Castagnoli)

def _crc_table() -> list[int]:
    poly = 0x82F63B78  # reversed 0x1EDC6F41
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ poly if c & 1 else c >> 1
        table.append(c)
    return table


_CRC_TABLE = _crc_table()


def crc32c(data: bytes) -> int:
    crc = 0xFFFFFFFF
    t = _CRC_TABLE
    for b in data:
        crc = t[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


assert crc32c(b"123456789") == 0xE3069283  # the standard check value


# ---------------------------------------------------------------- message builders

def header(length: int, request_id: int, response_to: int, opcode: int) -> bytes:
    return struct.pack("<iiii", length, request_id, response_to, opcode)


def op_msg(body: dict | bytes, request_id: int = 1, flags: int = 0, *, checksum: str | None = None,
           response_to: int = 0) -> bytes:
    """OP_MSG with one kind-0 section. checksum: None, "good" or "bad" (sets flag bit 0)."""
    raw = body if isinstance(body, bytes) else bson.encode(body)
    if checksum:
        flags |= 1
    payload = struct.pack("<I", flags) + b"\x00" + raw
    length = 16 + len(payload) + (4 if checksum else 0)
    msg = header(length, request_id, response_to, OP_MSG) + payload
    if checksum:
        crc = crc32c(msg)
        if checksum == "bad":
            crc ^= 0xDEADBEEF
        msg += struct.pack("<I", crc)
    return msg


def op_compressed(original_opcode: int, uncompressed_size: int, compressor_id: int,
                  payload: bytes, request_id: int = 1) -> bytes:
    body = struct.pack("<iiB", original_opcode, uncompressed_size, compressor_id) + payload
    return header(16 + len(body), request_id, 0, OP_COMPRESSED) + body


def op_reply(doc: dict, request_id: int, response_to: int) -> bytes:
    body = struct.pack("<iqii", 0, 0, 0, 1) + bson.encode(doc)
    return header(16 + len(body), request_id, response_to, OP_REPLY) + body


def recv_exact(sock: socket.socket, n: int) -> bytes:
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(min(n - len(buf), 1 << 20))
        if not chunk:
            raise ConnectionError(f"closed after {len(buf)} of {n} bytes")
        buf += chunk
    return bytes(buf)


def read_message(sock: socket.socket) -> tuple[int, int, int, bytes]:
    """(opcode, requestID, responseTo, bytes after the header)."""
    length, rid, response_to, opcode = struct.unpack("<iiii", recv_exact(sock, 16))
    return opcode, rid, response_to, recv_exact(sock, length - 16)


def op_msg_body(after_header: bytes) -> dict:
    """The kind-0 body of an OP_MSG (given the bytes after the header)."""
    assert after_header[4] == 0, "first section is not kind 0"
    n = struct.unpack_from("<i", after_header, 5)[0]
    return bson.decode(after_header[5:5 + n])


def reply_doc(opcode: int, after_header: bytes) -> dict:
    if opcode == OP_MSG:
        return op_msg_body(after_header)
    if opcode == OP_REPLY:
        return bson.decode(after_header[20:])
    raise AssertionError(f"unexpected opcode {opcode}")


def connect(port: int, host: str = "127.0.0.1", timeout: float = 5.0) -> socket.socket:
    s = socket.create_connection((host, port), timeout=timeout)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s


def closed_by_peer(sock: socket.socket, timeout: float = 5.0) -> tuple[bool, bytes]:
    """(closed within timeout?, bytes received before the close)."""
    sock.settimeout(0.2)
    got = bytearray()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            data = sock.recv(1 << 20)
        except socket.timeout:
            continue
        except (ConnectionResetError, BrokenPipeError):
            return True, bytes(got)
        if not data:
            return True, bytes(got)
        got += data
    return False, bytes(got)


def abort(sock: socket.socket) -> None:
    """Close with RST (SO_LINGER 0): the peer sees the connection vanish."""
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    except OSError:
        pass
    sock.close()


def wait_until(pred, timeout: float, interval: float = 0.05, what: str = "condition"):
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = pred()
        if last:
            return last
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout}s waiting for {what} (last: {last!r})")


# ---------------------------------------------------------------- /proc

def proc_status(pid: int) -> dict[str, int]:
    """VmRSS, VmHWM, VmSize... in kB, plus Threads and FDs."""
    out: dict[str, int] = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            k, _, v = line.partition(":")
            parts = v.split()
            if parts and parts[0].isdigit():
                out[k] = int(parts[0])
    try:
        out["FDs"] = len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        pass
    return out


def rss_kb(pid: int) -> int:
    return proc_status(pid)["VmRSS"]


def reset_peak_rss(pid: int) -> bool:
    """Reset VmHWM (peak RSS) so a later reading shows the peak of what happens next."""
    try:
        with open(f"/proc/{pid}/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def nofile_limit(pid: int) -> tuple[int, int]:
    with open(f"/proc/{pid}/limits") as f:
        for line in f:
            if line.startswith("Max open files"):
                p = line.split()
                return int(p[3]), int(p[4])
    raise AssertionError("no 'Max open files' line")


# ---------------------------------------------------------------- docguard wrapper

@dataclass
class Docguard:
    proc: harness.Proc
    config_path: Path

    @property
    def pid(self) -> int:
        return self.proc.popen.pid

    @property
    def port(self) -> int:
        return self.proc.ports["listen"]

    @property
    def admin(self) -> str:
        return f"127.0.0.1:{self.proc.ports['admin']}"

    @property
    def uri(self) -> str:
        return f"mongodb://127.0.0.1:{self.port}"

    def alive(self) -> bool:
        return self.proc.alive()

    def metrics(self) -> dict:
        return harness.fetch_metrics(self.admin)

    def metric(self, name: str, **labels: str) -> float:
        return harness.metric_sum(self.metrics(), name, **labels)

    def log_lines(self, start: int = 0) -> list[str]:
        return harness.read_log_lines(self.proc.log_path, start)

    def log_mark(self) -> int:
        return len(self.log_lines())

    def wait_log(self, start: int, *needles: str, timeout: float = 5.0) -> str:
        """The first log line after `start` containing every needle."""
        def find():
            for ln in self.log_lines(start):
                if all(n in ln for n in needles):
                    return ln
            return None
        return wait_until(find, timeout, what=f"a log line with {needles}")

    def wait_metric(self, name: str, above: float, timeout: float = 5.0, **labels: str) -> float:
        return wait_until(lambda: (v := self.metric(name, **labels)) > above and v, timeout,
                          what=f"{name}{labels} > {above}")

    def rss_kb(self) -> int:
        return rss_kb(self.pid)

    def status(self) -> dict[str, int]:
        return proc_status(self.pid)

    def healthy(self) -> bool:
        try:
            return harness.http_get(f"http://{self.admin}/healthz", timeout=2.0)[0] == 200
        except OSError:
            return False

    def ping_raw(self, request_id: int = 4242) -> dict:
        """A fresh raw connection sends ping and gets its reply (proves docguard serves others)."""
        with connect(self.port) as s:
            s.sendall(op_msg({"ping": 1, "$db": "admin"}, request_id=request_id))
            op, _rid, rto, body = read_message(s)
            assert rto == request_id
            return reply_doc(op, body)

    def sighup(self) -> None:
        os.kill(self.pid, signal.SIGHUP)


def start_docguard(upstream_uri: str, workdir: Path, config_text: str = "", *,
                   wait_upstream: bool = True, threads: int = 2) -> Docguard:
    """docguard on free ports with a YAML config (limits, rules); flags give listen/upstream/admin."""
    workdir.mkdir(parents=True, exist_ok=True)
    cfg = workdir / f"docguard-{time.monotonic_ns()}.yaml"
    # a key is always present: a comment-only/empty file crashes docguard (see
    # test_faults.py::test_comment_only_config_file_starts)
    # Introspection (docguard's own reads of the cluster) opens connections of its own and sends
    # commands the stub answers with nonsense: off here, where descriptors, connections and
    # upstream errors of the data path are counted, unless a test turns it on.
    if "introspection:" not in config_text:
        config_text = "introspection: {enabled: false}\n" + config_text
    cfg.write_text("# written by tests/faults\nlog_format: json\n" + config_text)
    proc = harness.start_docguard(upstream_uri, workdir, config=cfg, threads=threads,
                                  wait_upstream=wait_upstream)
    return Docguard(proc, cfg)


# ---------------------------------------------------------------- stub upstream

HELLO_REPLY = {
    "ismaster": True, "helloOk": True, "isWritablePrimary": True, "maxBsonObjectSize": 16777216,
    "maxMessageSizeBytes": 48000000, "maxWriteBatchSize": 100000, "localTime": None,
    "logicalSessionTimeoutMinutes": 30, "connectionId": 1, "minWireVersion": 0,
    "maxWireVersion": 17, "readOnly": False, "ok": 1.0,
}


class StubUpstream:
    """A MongoDB-ish server on 127.0.0.1 that misbehaves on request.

    It answers OP_QUERY/OP_MSG hello with a standalone hello and every other OP_MSG command with
    {ok: 1, echo: <the command's first value>}. The command body drives faults:
      {"fault": "half"}       send the first half of the reply, then close the connection;
      {"fault": "close"}      close without replying;
      {"delay": SECONDS}      sleep, then reply (sleep is interruptible by stop());
      {"big": NBYTES}         reply with a string field of NBYTES bytes.
    """

    def __init__(self) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(256)
        self.port = self.sock.getsockname()[1]
        self.uri = f"mongodb://127.0.0.1:{self.port}"
        self._stop = threading.Event()
        self._conns: list[socket.socket] = []
        self._lock = threading.Lock()
        self.accepted = 0
        self.requests: list[dict] = []
        self._next_id = 1000
        self._thread = threading.Thread(target=self._accept_loop, daemon=True)
        self._thread.start()

    def _accept_loop(self) -> None:
        self.sock.settimeout(0.2)
        while not self._stop.is_set():
            try:
                c, _ = self.sock.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            with self._lock:
                self._conns.append(c)
                self.accepted += 1
            threading.Thread(target=self._serve, args=(c,), daemon=True).start()

    def _send_reply(self, c: socket.socket, opcode: int, rid: int, doc: dict, half: bool) -> None:
        self._next_id += 1
        if opcode == OP_QUERY:
            msg = op_reply(doc, self._next_id, rid)
        else:
            msg = op_msg(doc, request_id=self._next_id, response_to=rid)
        if half:
            c.sendall(msg[: len(msg) // 2])
            time.sleep(0.05)
            c.close()
            return
        c.sendall(msg)

    def _serve(self, c: socket.socket) -> None:
        c.settimeout(0.5)
        try:
            while not self._stop.is_set():
                try:
                    head = c.recv(16, socket.MSG_PEEK)
                except socket.timeout:
                    continue
                if not head:
                    return
                c.settimeout(10)
                opcode, rid, _rto, rest = read_message(c)
                c.settimeout(0.5)
                if opcode == OP_QUERY:
                    self._send_reply(c, opcode, rid, {**HELLO_REPLY, "localTime": _now()}, False)
                    continue
                flags = struct.unpack_from("<I", rest)[0]
                body = op_msg_body(rest)
                self.requests.append(body)
                if flags & 2:  # moreToCome: no reply
                    continue
                name = next(iter(body), "")
                if name.lower() in ("hello", "ismaster"):
                    self._send_reply(c, opcode, rid, {**HELLO_REPLY, "localTime": _now()}, False)
                    continue
                if body.get("fault") == "close":
                    c.close()
                    return
                if "delay" in body:
                    self._stop.wait(float(body["delay"]))
                doc = {"echo": body.get(name), "ok": 1.0}
                if "big" in body:
                    doc["data"] = "x" * int(body["big"])
                self._send_reply(c, opcode, rid, doc, body.get("fault") == "half")
                if body.get("fault") == "half":
                    return
        except Exception:  # noqa: BLE001 -- hostile input may be relayed here; just hang up
            return
        finally:
            try:
                c.close()
            except OSError:
                pass

    def stop(self) -> None:
        self._stop.set()
        try:
            self.sock.close()
        except OSError:
            pass
        with self._lock:
            for c in self._conns:
                try:
                    c.close()
                except OSError:
                    pass
        self._thread.join(timeout=2)


def _now():
    import datetime
    return datetime.datetime.now(datetime.timezone.utc)


# ---------------------------------------------------------------- "other clients unaffected"

class Bystander:
    """A raw connection opened before a fault and used after it: it must keep working."""

    def __init__(self, dg: Docguard) -> None:
        self.dg = dg
        self.sock = connect(dg.port)
        self.rid = 50_000
        self.check()

    def check(self) -> None:
        self.rid += 1
        self.sock.settimeout(10)
        self.sock.sendall(op_msg({"ping": 1, "$db": "admin"}, request_id=self.rid))
        op, _r, rto, body = read_message(self.sock)
        assert rto == self.rid, f"bystander got a reply to {rto}, expected {self.rid}"
        assert reply_doc(op, body).get("ok") == 1.0

    def close(self) -> None:
        self.sock.close()


def assert_survived(dg: Docguard, bystander: Bystander | None, rss_before_kb: int,
                    max_growth_kb: int = 64 * 1024) -> None:
    """docguard is up and healthy, the bystander and a fresh connection work, RSS is bounded."""
    assert dg.alive(), "docguard exited:\n" + "\n".join(dg.log_lines()[-20:])
    assert dg.healthy(), "/healthz is not 200"
    if bystander is not None:
        bystander.check()
    assert dg.ping_raw().get("ok") == 1.0
    rss = dg.rss_kb()
    assert rss < rss_before_kb + max_growth_kb, f"RSS grew from {rss_before_kb} kB to {rss} kB"
