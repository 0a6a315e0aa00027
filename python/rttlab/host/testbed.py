"""The testbed: a star of network namespaces on this machine, and its removal.

One namespace per host of the scenario's star (``rttlab-h0``, ``rttlab-h1``…) and one for the
switch (``rttlab-sw``), whose bridge joins a veth pair per host. The switch's egress port
towards each host is shaped by ``tbf`` at the host's link rate, with the switch's buffer as
its limit (tail drop); the hosts' own NICs are veth, unshaped (a sender's rate beyond its
link's is the controller's to keep). Marking (ECN) is the
tc marker on the switch's ports (``bpf/marker.bpf.c``).

What the testbed owns carries the prefix ``rttlab-`` (namespaces) or ``rttlab_`` (BPF
struct_ops maps); a machine-wide lock lets one testbed exist at a time, so whatever carries the
prefix when the lock is taken was left by a run that crashed, and is removed. Nothing else is
touched. Removing a namespace removes its links, qdiscs and tc programs.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import signal
import subprocess
from dataclasses import dataclass
from pathlib import Path

from .build import HostError

PREFIX = "rttlab-"
OPS_PREFIX = "rttlab_"
SWITCH = PREFIX + "sw"
LOCK = Path("/run/lock/rttlab-host.lock")
#: How long a full bucket of a port's `tbf` lasts at its rate. A smaller bucket gives away
#: capacity whenever the qdisc's timer fires late (one flow through 1 Gbps, measured: 0.81
#: Gbps of goodput with two frames, 0.94 with 100 us, 0.96 at line rate with 240 us).
BUCKET_S = 100e-6


#: A host's TCP receive buffer.
RCVBUF = 4 << 20


def bucket_bytes(rate_bps: int) -> int:
    """A port's `tbf` bucket: `BUCKET_S` at its rate, at least two full-size frames."""
    return max(round(rate_bps * BUCKET_S / 8), 2 * 1514)


def host_ns(h: int) -> str:
    return f"{PREFIX}h{h}"


def address(h: int) -> str:
    return f"10.77.{h // 250}.{h % 250 + 1}"


def run(*cmd: str, ns: str | None = None, check: bool = True) -> subprocess.CompletedProcess:
    """Runs a command (in namespace ``ns``); a failure raises with the command and its message."""
    full = ["ip", "netns", "exec", ns, *cmd] if ns else list(cmd)
    p = subprocess.run(full, capture_output=True, text=True)
    if check and p.returncode:
        raise HostError(f"testbed: `{' '.join(full)}` failed: {p.stderr.strip() or p.stdout.strip()}")
    return p


def namespaces() -> list[str]:
    """The testbed's namespaces that exist now."""
    out = run("ip", "-j", "netns", "list", check=False).stdout.strip()
    return [n["name"] for n in json.loads(out or "[]") if n["name"].startswith(PREFIX)]


def struct_ops() -> list[tuple[int, str]]:
    """The testbed's struct_ops maps that exist now: (id, name)."""
    p = run("bpftool", "-j", "struct_ops", "list", check=False)
    if p.returncode:
        return []
    return [(m["id"], m["name"]) for m in json.loads(p.stdout or "[]") if m["name"].startswith(OPS_PREFIX)]


def remove_all() -> list[str]:
    """Removes every namespace and struct_ops map of the testbed's; returns what it removed."""
    gone = []
    for ns in namespaces():
        # A crashed run's senders and receivers may still run in it: they go, and their
        # connections are reset at once (`ss -K`): a socket orphaned with data to send would
        # retransmit into the removed namespace for minutes, holding its controller's
        # struct_ops map.
        for pid in run("ip", "netns", "pids", ns, check=False).stdout.split():
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(pid), signal.SIGKILL)
        run("ss", "-K", "-t", ns=ns, check=False)
        run("ip", "netns", "del", ns, check=False)
        gone.append(f"netns {ns}")
    for id_, name in struct_ops():
        # (One that is unregistered already and waits for its last sockets cannot be.)
        if run("bpftool", "struct_ops", "unregister", "id", str(id_), check=False).returncode == 0:
            gone.append(f"struct_ops {name}")
    return gone


@dataclass(frozen=True)
class Link:
    """One host's link: its rate (bit/s) both ways, the switch port's buffer (bytes), and the
    MTU (bytes of IP packet)."""

    rate_bps: int
    buffer_bytes: int
    mtu: int


class Testbed:
    """The star, built on entry and removed on exit (also after an error or a Ctrl-C).

    ``tso``: the hosts' NICs segment TCP's bursts (TSO and GSO on); off, every packet is sent
    and paced on its own. ``stale`` lists what a crashed run had left and entry removed."""

    def __init__(self, links: list[Link], *, tso: bool):
        self.links = links
        self.tso = tso
        self.stale: list[str] = []
        self._lock: int | None = None

    def __enter__(self) -> Testbed:
        LOCK.parent.mkdir(parents=True, exist_ok=True)
        self._lock = os.open(LOCK, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(self._lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(self._lock)
            self._lock = None
            raise HostError("another rttlab host run is using the testbed (one at a time per machine)") from None
        self.stale = remove_all()
        try:
            self._build()
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *exc) -> None:
        remove_all()
        if self._lock is not None:
            os.close(self._lock)
            self._lock = None

    def _build(self) -> None:
        run("ip", "netns", "add", SWITCH)
        run("ip", "link", "set", "lo", "up", ns=SWITCH)
        run("ip", "link", "add", "br0", "type", "bridge", ns=SWITCH)
        run("ip", "link", "set", "br0", "up", ns=SWITCH)
        for h, link in enumerate(self.links):
            ns, port = host_ns(h), self.port(h)
            run("ip", "netns", "add", ns)
            run("ip", "link", "add", "eth0", "netns", ns, "type", "veth", "peer", "name", port, "netns", SWITCH)
            run("ip", "link", "set", "lo", "up", ns=ns)
            # Receive buffers of 4 MB from the start: Linux acknowledges at once (every second
            # segment) only while the window it would offer is not smaller than the last, so a
            # small buffer lets the reading application's pace delay the ACKs.
            run("sh", "-c", f"echo 4096 {RCVBUF} {4 * RCVBUF} > /proc/sys/net/ipv4/tcp_rmem", ns=ns)
            run("ip", "addr", "add", f"{address(h)}/16", "dev", "eth0", ns=ns)
            run("ip", "link", "set", "eth0", "mtu", str(link.mtu), "up", ns=ns)
            run("ip", "link", "set", port, "mtu", str(link.mtu), ns=SWITCH)
            run("ip", "link", "set", port, "master", "br0", ns=SWITCH)
            run("ip", "link", "set", port, "up", ns=SWITCH)
            onoff = "on" if self.tso else "off"
            run("ethtool", "-K", "eth0", "tso", onoff, "gso", onoff, ns=ns)
            run("ethtool", "-K", port, "tso", onoff, "gso", onoff, "gro", "off", ns=SWITCH)
            self._shape(SWITCH, port, link.rate_bps, link.buffer_bytes)

    @staticmethod
    def port(h: int) -> str:
        """The switch's port towards host ``h``."""
        return f"p{h}"

    @staticmethod
    def _shape(ns: str, dev: str, rate_bps: int, limit: int) -> None:
        burst = bucket_bytes(rate_bps)
        run(
            "tc",
            "qdisc",
            "add",
            "dev",
            dev,
            "root",
            "tbf",
            "rate",
            f"{rate_bps}bit",
            "burst",
            str(burst),
            "limit",
            str(max(limit, burst)),
            ns=ns,
        )
