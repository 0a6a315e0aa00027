"""The testbed's traffic: one process per namespace, run as a script (no rttlab import, so that
it starts in milliseconds), that sends or receives the scenario's connections as real TCP and
writes what it saw as JSON.

    endpoint.py receive PORT CC START WARMUP END OUT
    endpoint.py send DST PORT CC END OUT FLOWS_JSON
    endpoint.py pong PORT BYTES
    endpoint.py ping DST PORT BYTES EXCHANGES OUT

Times are ``time.monotonic()`` seconds, the same clock in every network namespace. A sender's
connection writes a 12-byte header (flow number, size; size 0: send until the end), then its
data; the receiver counts each connection's bytes, notes them at the warm-up's end and at the
end, and when a sized connection's last byte arrived.
"""

from __future__ import annotations

import json
import os
import selectors
import socket
import struct
import sys
import threading
import time

HEADER = struct.Struct("<IQ")
#: Bytes a sender hands over per call (a backlogged flow checks its stop time between calls).
SEND_CHUNK = 1 << 16
#: Bytes a receiver lets arrive before it reads. Data that arrives while the application
#: reads waits in the socket's backlog and is acknowledged in one stretch ACK when the read
#: ends, which would make the reader's pace the ACKs' (the kernel's RTT samples grow with it):
#: reading seldom, and discarding the data without a copy (MSG_TRUNC), keeps the socket free.
LOWAT = 1 << 20
#: Seconds a receiver reads on after the end.
GRACE = 0.3
# struct tcp_info (include/uapi/linux/tcp.h): the offsets of the fields read here.
TCP_INFO_LEN = 232
INFO_FIELDS = {
    "total_retrans": (100, "I"),
    "min_rtt_us": (148, "I"),
    "delivered_ce": (196, "I"),
    "bytes_sent": (200, "Q"),
    "bytes_retrans": (208, "Q"),
}


def set_cc(sock: socket.socket, cc: str) -> None:
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, cc.encode())


def tcp_info(sock: socket.socket) -> dict[str, int]:
    raw = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, TCP_INFO_LEN)
    return {
        k: struct.unpack_from("<" + f, raw, off)[0]
        for k, (off, f) in INFO_FIELDS.items()
        if off + struct.calcsize(f) <= len(raw)
    }


def receive(port: int, cc: str, start: float, warmup: float, end: float, out: str) -> None:
    lsock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    set_cc(lsock, cc)
    lsock.bind(("0.0.0.0", port))
    lsock.listen(1024)
    lsock.setblocking(False)
    sel = selectors.DefaultSelector()
    sel.register(lsock, selectors.EVENT_READ, None)
    buf = bytearray(LOWAT)
    conns: dict[socket.socket, dict] = {}
    flows: dict[int, dict] = {}

    def drain() -> None:
        """Takes up what every connection has received so far (the counts are then exact)."""
        for c, state in conns.items():
            if "rec" not in state:
                continue
            try:
                while (n := c.recv_into(buf, len(buf), socket.MSG_TRUNC | socket.MSG_DONTWAIT)) > 0:
                    state["rec"]["bytes"] += n
            except (BlockingIOError, ConnectionError):
                pass

    print("ready", flush=True)
    noted = ended = False
    # When the counts were taken: this loop wakes a millisecond or more after the instant
    # asked, so the goodput divides by the time between them, not by the window asked for.
    noted_at = start + warmup
    while True:
        now = time.monotonic()
        if not noted and now >= start + warmup:
            drain()
            noted_at = time.monotonic()
            for c in flows.values():
                c["at_warmup"] = c["bytes"]
            noted = True
        if not ended and now >= end:
            drain()
            ended_at = time.monotonic()
            for c in flows.values():
                c["at_end"] = c["bytes"]
                c["measured_s"] = ended_at - noted_at
            ended = True
        # Reading on past the end lets the senders stop first (no reset counts as an error).
        if now >= end + GRACE:
            break
        for key, _ in sel.select(timeout=1e-3):
            if key.data is None:
                try:
                    c, _ = lsock.accept()
                except BlockingIOError:
                    continue
                c.setblocking(False)
                conns[c] = {"header": b""}
                sel.register(c, selectors.EVENT_READ, c)
                continue
            c = key.data
            state = conns[c]
            try:
                if "rec" not in state:
                    # The header first, then the data, discarded unread.
                    part = c.recv(HEADER.size - len(state["header"]))
                    n = len(part)
                    state["header"] += part
                else:
                    n = c.recv_into(buf, len(buf), socket.MSG_TRUNC)
            except BlockingIOError:
                continue
            except ConnectionError:
                n = 0
            if n == 0:
                sel.unregister(c)
                del conns[c]
                c.close()
                continue
            if "rec" not in state:
                if len(state["header"]) < HEADER.size:
                    continue
                flow, size = HEADER.unpack(state["header"])
                flows[flow] = state["rec"] = {
                    "bytes": 0,
                    "size": size,
                    "finish": None,
                    "at_warmup": 0 if not noted else None,
                    "at_end": None,
                }
            else:
                state["rec"]["bytes"] += n
            rec = state["rec"]
            if rec["size"] and rec["finish"] is None and rec["bytes"] >= rec["size"]:
                rec["finish"] = time.monotonic()
            # Woken once LOWAT bytes (or a sized flow's rest) are there, not by every packet.
            left = rec["size"] - rec["bytes"] if rec["size"] else LOWAT
            c.setsockopt(socket.SOL_SOCKET, socket.SO_RCVLOWAT, max(1, min(left, LOWAT)))
    with open(out, "w") as f:
        json.dump({str(k): v for k, v in flows.items()}, f)


def send(dst: str, port: int, cc: str, end: float, out: str, flows: list[dict]) -> None:
    results: dict[int, dict] = {}
    # The data: zeros from an in-memory file, handed to the socket by sendfile (no copy through
    # this process, which would otherwise take a core of the testbed's few).
    zeros = os.memfd_create("rttlab-zeros")
    os.ftruncate(zeros, SEND_CHUNK)
    source = os.fdopen(zeros, "rb")

    def one(spec: dict) -> None:
        delay = spec["start"] - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            set_cc(s, cc)
            s.connect((dst, port))
        except OSError as e:
            results[spec["flow"]] = {"port": None, "start": time.monotonic(), "error": f"connect: {e!r}"}
            return
        rec = {"port": s.getsockname()[1], "start": time.monotonic(), "error": None}
        results[spec["flow"]] = rec
        size = spec["size"]
        stop = min(end, spec.get("stop", end))
        try:
            s.sendall(HEADER.pack(spec["flow"], size))
            left = size
            while (left > 0 if size else True) and time.monotonic() < stop:
                n = min(left, SEND_CHUNK) if size else SEND_CHUNK
                s.settimeout(max(stop - time.monotonic(), 0.001))
                s.sendfile(source, 0, n)
                left -= n
        except (TimeoutError, ConnectionError) as e:
            if not isinstance(e, socket.timeout):
                rec["error"] = repr(e)
        rec.update(tcp_info(s))
        s.close()

    threads = [threading.Thread(target=one, args=(spec,)) for spec in flows]
    for t in threads:
        t.start()
    print("ready", flush=True)
    for t in threads:
        t.join()
    with open(out, "w") as f:
        json.dump({str(k): v for k, v in results.items()}, f)


#: `SO_TIMESTAMPNS` (asm-generic/socket.h; Python's socket module does not name it) and its
#: control message's payload, a struct timespec.
SO_TIMESTAMPNS = 35
TIMESPEC = struct.Struct("<qq")


def pong(port: int, size: int) -> None:
    """Answers each `size`-byte message of one connection with as many bytes, until it closes."""
    lsock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    lsock.bind(("0.0.0.0", port))
    lsock.listen(1)
    print("ready", flush=True)
    c, _ = lsock.accept()
    c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    reply = bytes(size)
    while len(c.recv(size, socket.MSG_WAITALL)) == size:
        c.sendall(reply)


def ping(dst: str, port: int, size: int, exchanges: int, out: str) -> None:
    """`exchanges` ping-pongs of `size` bytes each way (TIMELY Fig. 1), timed by the
    application as a software-timestamping stack times them, and the part of each that is the
    host's: from the kernel's receive timestamp of the reply's last packet (`SO_TIMESTAMPNS`,
    taken as the stack takes the packet from the NIC) to the application running again.
    Writes int64 nanoseconds, (round trip, wake-up) per exchange."""
    s = socket.create_connection((dst, port))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    s.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
    request = bytes(size)
    times = []
    print("ready", flush=True)
    for _ in range(exchanges):
        t0 = time.time_ns()
        s.sendall(request)
        got, anc, _, _ = s.recvmsg(size, socket.CMSG_SPACE(TIMESPEC.size), socket.MSG_WAITALL)
        t1 = time.time_ns()
        if len(got) < size:
            raise ConnectionError(f"the echo closed after {len(got)} of {size} bytes")
        stamps = [
            TIMESPEC.unpack_from(d) for lvl, kind, d in anc if lvl == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS
        ]
        if stamps:
            sec, ns = stamps[-1]
            times.append((t1 - t0, t1 - (sec * 1_000_000_000 + ns)))
    s.close()
    with open(out, "w") as f:
        json.dump(times, f)


if __name__ == "__main__":
    role, *args = sys.argv[1:]
    if role == "receive":
        receive(int(args[0]), args[1], float(args[2]), float(args[3]), float(args[4]), args[5])
    elif role == "pong":
        pong(int(args[0]), int(args[1]))
    elif role == "ping":
        ping(args[0], int(args[1]), int(args[2]), int(args[3]), args[4])
    else:
        send(args[0], int(args[1]), args[2], float(args[3]), args[4], json.loads(args[5]))
