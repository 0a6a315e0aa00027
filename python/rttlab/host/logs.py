"""The records the kernel programs log (``struct rttlab_event`` in ``bpf/rttlab.h``), read as
NumPy arrays."""

from __future__ import annotations

from pathlib import Path

import numpy as np

#: The one definition of the record every kernel program logs: each field's name, NumPy type,
#: C type in ``struct rttlab_event`` (``bpf/rttlab.h``) and what it holds. The header's struct,
#: its comments and kinds, this module's decoder and the Rust replay's ``Records``
#: (``crates/py/src/replay.rs``) are checked against it (``tests/test_host_schema.py``).
FIELDS = (
    ("t_ns", "<u8", "__u64", "when, ns: bpf_ktime_get_ns() as it was logged (CLOCK_MONOTONIC)"),
    ("port", "<u4", "__u32", "the connection: its local port, and its remote port << 16 (the marker: the ifindex)"),
    ("kind", "<u2", "__u16", "EV_*"),
    (
        "flags",
        "<u2",
        "__u16",
        "TIMELY's HAI count (at EV_INIT: 1 for Patched TIMELY), Swift's retransmit count, DCTCP's CE-marked packets; the marker: 1 marked, 2 no room (tbf drops it)",
    ),
    ("rtt_us", "<i8", "__s64", "the RTT sample, µs (-1: none)"),
    (
        "acked",
        "<u8",
        "__u64",
        "what the ACK acknowledges: bytes (TIMELY), packets (Swift, DCTCP); the marker: the packet's bytes",
    ),
    (
        "value",
        "<u8",
        "__u64",
        "the decision: TIMELY's rate in bit/s, Swift's fabric window in packets·2^32, snd_cwnd in packets (DCTCP, the observer); the marker: the queue's bytes",
    ),
    ("aux", "<i8", "__s64", "more state: TIMELY's gradient EWMA (ps), Swift's smoothed RTT (ps), DCTCP's α·2^16"),
    ("aux2", "<u8", "__u64", "more state: Swift's last decrease (ps), DCTCP's CE-marked packets"),
)

#: The record's kinds, as ``enum { EV_INIT = 0, ... }`` in the header.
KINDS = {"EV_INIT": 0, "EV_ACK": 1, "EV_LOSS": 2, "EV_TIMEOUT": 3, "EV_RTT": 4}
EV_INIT, EV_ACK, EV_LOSS, EV_TIMEOUT, EV_RTT = KINDS.values()

#: ``struct rttlab_event`` as NumPy reads it (56 bytes, little endian, no padding).
EVENT = np.dtype([(name, numpy) for name, numpy, _, _ in FIELDS])
assert EVENT.itemsize == 56


def read(path: Path) -> np.ndarray:
    """Every whole record of the file (a run stopped mid-write leaves at most a partial last)."""
    data = Path(path).read_bytes()
    return np.frombuffer(data[: len(data) - len(data) % EVENT.itemsize], dtype=EVENT)
