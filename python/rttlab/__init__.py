"""rttlab: a laboratory for datacenter congestion control.

>>> import rttlab
>>> r = rttlab.run("scenarios/timely-testbed-pfc.toml", overrides={"duration": "20ms"})
>>> r.summary["throughput_gbps"], r.flows.head()
"""

from __future__ import annotations

from typing import Any, Mapping

from . import _core
from .progress import RunProgress
from .result import Result
from .scenario import ScenarioLike, apply_overrides, load, resolve, to_json

__version__ = _core.__version__

#: Raised when an internal check of the simulator fails: a bug in rttlab, never bad input.
InternalError = _core.InternalError
__all__ = ["run", "load", "resolve", "Result", "InternalError", "__version__"]


def run(scenario: ScenarioLike, overrides: Mapping[str, Any] | None = None, *, seed: int | None = None, progress: bool = False) -> Result:
    """Runs one scenario: a dict, a TOML file path or TOML text. ``overrides`` maps dotted keys
    to values (``{"nic.segment": "32KB"}``); ``seed`` replaces the scenario's seed; ``progress``
    draws a progress bar on stderr. Raises ``ValueError`` naming the field, the value and what
    is allowed if the scenario is invalid, and ``KeyboardInterrupt`` within milliseconds of a
    Ctrl-C (nothing of the run is kept)."""
    s = apply_overrides(load(scenario), overrides)
    if seed is not None:
        s["seed"] = seed
    text = to_json(s)
    if not progress:
        return Result.from_native(*_core.run(text))
    with RunProgress() as bar:
        out = _core.run(text, bar)
    return Result.from_native(*out)
