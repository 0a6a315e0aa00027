"""Type information for rttlab's native module (crates/py/src/lib.rs)."""

from collections.abc import Callable
from typing import Any

import numpy as np

__version__: str

class InternalError(RuntimeError):
    """A bug in rttlab: an internal check failed."""

class ControllerError(RuntimeError):
    """A congestion controller written in Python raised (the ``__cause__``) or returned a value
    no controller may."""

class Completion:
    """A completion event for a rate controller (times in ps, rates in bit/s)."""

    now_ps: int
    rtt_ps: int
    acked_bytes: int
    sending_rate_bps: int | None
    snd_una: int
    snd_nxt: int
    #: One ``(ts, tx, qlen, rate_bps)`` per switch, in the INT wire encoding (``switch.int``).
    int_hops: list[tuple[int, int, int, int]]

class Ack:
    """An ACK for a window controller (times in ps, sequence numbers in payload bytes)."""

    now_ps: int
    acked_bytes: int
    ece: bool
    rtt_ps: int | None
    snd_una: int
    snd_nxt: int
    in_recovery: bool
    cwnd_limited: bool
    endpoint_delay_ps: int
    hops: int

#: A Python controller: its class and its resolved parameters.
Controller = tuple[type, dict[str, Any]]

#: ``observe(now_ps, end_ps, events)``, called about every 100 ms of wall time; True stops the run.
Observe = Callable[[int, int, int], bool]

#: A column: an array (int64, float64 with NaN where missing), ``("labels", codes, names)`` for
#: text, or ``("masked", values, missing)`` for integers with missing values.
Column = np.ndarray | tuple[str, np.ndarray, Any]

def run(
    scenario: str, observe: Observe | None = None, controller: Controller | None = None
) -> tuple[str, str, dict[str, dict[str, Column]], dict[str, bytes]]:
    """Runs a scenario given as JSON: (summary JSON, meta JSON, tables by name, pcap files by
    captured port). ``controller``: ``cc.algorithm = "python"``'s class and parameters."""

def run_json(scenario: str, observe: Observe | None = None, controller: Controller | None = None) -> str:
    """Runs a scenario given as JSON: ``{"summary", "tables", "dtypes", "meta"}`` as JSON (no
    packet captures)."""

def quantity(text: str) -> tuple[str, float] | None:
    """``text`` as a quantity: ("us", microseconds), ("gbps", Gbps) or ("bytes", bytes); None if
    it is not one."""

def base_units(text: str) -> tuple[str, int] | None:
    """``text`` in the simulator's units: ("ps", picoseconds), ("bps", bit/s) or ("bytes",
    bytes); None if it is not a quantity."""

def resolve_json(scenario: str) -> str:
    """Validates a scenario given as JSON; returns it with every default filled in."""

def _panic_for_test() -> None: ...
