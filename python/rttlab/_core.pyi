"""Type information for rttlab's native module (crates/py/src/lib.rs)."""

from typing import Any, Callable

import numpy as np

__version__: str

class InternalError(RuntimeError):
    """A bug in rttlab: an internal check failed."""

#: ``observe(now_ps, end_ps, events)``, called about every 100 ms of wall time; True stops the run.
Observe = Callable[[int, int, int], bool]

#: A column: an array (int64, float64 with NaN where missing), ``("labels", codes, names)`` for
#: text, or ``("masked", values, missing)`` for integers with missing values.
Column = np.ndarray | tuple[str, np.ndarray, Any]

def run(scenario: str, observe: Observe | None = None) -> tuple[str, str, dict[str, dict[str, Column]], dict[str, bytes]]:
    """Runs a scenario given as JSON: (summary JSON, meta JSON, tables by name, pcap files by
    captured port)."""

def run_json(scenario: str, observe: Observe | None = None) -> str:
    """Runs a scenario given as JSON: ``{"summary", "tables", "dtypes", "meta"}`` as JSON (no
    packet captures)."""

def quantity(text: str) -> tuple[str, float] | None:
    """``text`` as a quantity: ("us", microseconds), ("gbps", Gbps) or ("bytes", bytes); None if
    it is not one."""

def resolve_json(scenario: str) -> str:
    """Validates a scenario given as JSON; returns it with every default filled in."""

def _panic_for_test() -> None: ...
