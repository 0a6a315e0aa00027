"""The records the kernel programs log (``struct rttlab_event`` in ``bpf/rttlab.h``), read as
NumPy arrays."""

from __future__ import annotations

from pathlib import Path

import numpy as np

#: `struct rttlab_event`, field for field (56 bytes, little endian).
EVENT = np.dtype(
    [
        ("t_ns", "<u8"),
        ("port", "<u4"),
        ("kind", "<u2"),
        ("flags", "<u2"),
        ("rtt_us", "<i8"),
        ("acked", "<u8"),
        ("value", "<u8"),
        ("aux", "<i8"),
        ("aux2", "<u8"),
    ]
)
assert EVENT.itemsize == 56

EV_INIT, EV_ACK, EV_LOSS, EV_TIMEOUT, EV_RTT = 0, 1, 2, 3, 4


def read(path: Path) -> np.ndarray:
    """Every whole record of the file (a run stopped mid-write leaves at most a partial last)."""
    data = Path(path).read_bytes()
    return np.frombuffer(data[: len(data) - len(data) % EVENT.itemsize], dtype=EVENT)
