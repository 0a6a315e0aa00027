"""Software timestamps measured on this machine's kernel: what a stack that timestamps round
trips in software adds to each one (TIMELY §3.1, Figs. 1 and 11: "interrupts and wakeups are
included in the software timestamp numbers", a variance that "increases as load on the host
increases").

Two namespaces of the testbed exchange 16 KB ping-pongs over kernel TCP (Fig. 1's traffic).
For each exchange the client notes the kernel's receive timestamp of the reply's last packet
(``SO_TIMESTAMPNS``: taken as the stack takes the packet from the NIC, the nearest this
machine has to a NIC timestamp) and the moment the application runs again: their difference
is the host's part of a software-timestamped round trip, and what it exceeds its fastest
exchange by is the noise (the fixed part, the application's own path, is no noise: a faster
language shortens it). ``idle``: nothing else runs;
``busy``: one CPU-bound process per core beside it, at the same priority.

`measure` returns the samples; `quantiles` reduces them to what the simulator draws from
(`nic.timestamps = "software"`, crates/sim/data/software-timestamps.csv, written by
``python -m rttlab.host.timestamps FILE``).
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from . import build
from .run import PORT, _spawn
from .testbed import Link, Testbed, address, host_ns

LOADS = ("idle", "busy")
#: Each way of a ping-pong (Fig. 1: 16 KB).
MESSAGE_BYTES = 16 * 1024
#: Quantiles kept, equally spaced from 0 to 1.
QUANTILES = 1001
LINK = Link(rate_bps=10 * 10**9, buffer_bytes=1 << 20, mtu=1500)


def measure(load: str, exchanges: int = 20_000) -> np.ndarray:
    """(round trip, host's part) in ns of ``exchanges`` ping-pongs at host load ``load``."""
    if load not in LOADS:
        raise ValueError(f"load = {load!r}: one of {', '.join(LOADS)}")
    spin = [sys.executable, "-c", "while True: pass"]
    with tempfile.TemporaryDirectory(prefix="rttlab-host-") as tmp, Testbed([LINK, LINK], tso=True):
        procs: list[subprocess.Popen] = []
        try:
            _spawn(procs, host_ns(0), "pong", PORT, MESSAGE_BYTES)
            if load == "busy":
                for cpu in range(os.cpu_count() or 1):
                    procs.append(subprocess.Popen(["taskset", "-c", str(cpu), *spin]))
            out = Path(tmp) / "ping.json"
            client = _spawn(procs, host_ns(1), "ping", address(0), PORT, MESSAGE_BYTES, exchanges, out)
            _, err = client.communicate(timeout=60 + exchanges * 0.01)
            if client.returncode:
                raise build.HostError(f"the ping-pong failed: {err.strip()[-2000:]}")
            return np.array(json.loads(out.read_text()), dtype=np.int64).reshape(-1, 2)
        finally:
            for p in procs:
                if p.poll() is None:
                    p.kill()
                with contextlib.suppress(subprocess.TimeoutExpired):
                    p.wait(timeout=2)


def quantiles(samples_ns: np.ndarray) -> np.ndarray:
    """`QUANTILES` equally spaced quantiles of ``samples_ns``, in whole nanoseconds."""
    return np.round(np.quantile(samples_ns, np.linspace(0, 1, QUANTILES))).astype(np.int64)


def write(path: Path, exchanges: int = 20_000) -> None:
    """Measures every load and writes the quantiles of the host's part beyond its fastest
    exchange as CSV (``load,quantile,ns``), its provenance in comment lines."""
    rows, notes = [], []
    for load in LOADS:
        x = measure(load, exchanges)
        host = x[:, 1]
        rows += [f"{load},{i / (QUANTILES - 1):.3f},{v}" for i, v in enumerate(quantiles(host - host.min()))]
        pct = "/".join(f"{np.quantile(host, q) / 1e3:.1f}" for q in (0.5, 0.99, 1.0))
        notes.append(
            f"# {load}: {len(x)} exchanges; round trip p50 {np.median(x[:, 0]) / 1e3:.1f} us; host's part min "
            f"{host.min() / 1e3:.1f} us (left out), p50/p99/max {pct} us"
        )
        print(notes[-1][2:])
    header = [
        "# The host's part of a software-timestamped round trip: from the kernel's receive",
        "# timestamp of a 16 KB reply's last packet to the application running again, over",
        "# kernel TCP between two network namespaces (python -m rttlab.host.timestamps FILE).",
        f"# Measured on Linux {platform.release()}, {os.cpu_count()} cores, {exchanges} exchanges per load;",
        "# busy: one CPU-bound process per core beside the ping-pong.",
        *notes,
        "load,quantile,ns",
    ]
    path.write_text("\n".join(header + rows) + "\n")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(f"usage: {sys.executable} -m rttlab.host.timestamps FILE")
    write(Path(sys.argv[1]))
