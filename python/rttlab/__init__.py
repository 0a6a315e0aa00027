"""rttlab: a laboratory for datacenter congestion control.

>>> import rttlab
>>> r = rttlab.run("scenarios/timely-testbed-pfc.toml", overrides={"duration": "20ms"})
>>> r.summary["throughput_gbps"], r.flows.head()
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from . import _core
from .controller import CC_COMMON, ControllerError, RateController, WindowController, class_path, prepare
from .progress import RunProgress
from .result import Result
from .scenario import ScenarioLike, apply_overrides, load, resolve, to_json

__version__ = _core.__version__

#: Raised when an internal check of the simulator fails: a bug in rttlab, never bad input.
InternalError = _core.InternalError
__all__ = [
    "ControllerError",
    "InternalError",
    "RateController",
    "Result",
    "WindowController",
    "__version__",
    "load",
    "resolve",
    "run",
]


def run(
    scenario: ScenarioLike,
    overrides: Mapping[str, Any] | None = None,
    *,
    seed: int | None = None,
    progress: bool = False,
    controller: type | None = None,
) -> Result:
    """Runs one scenario: a dict, a TOML file path or TOML text. ``overrides`` maps dotted keys
    to values (``{"nic.segment": "32KB"}``); ``seed`` replaces the scenario's seed; ``progress``
    draws a progress bar on stderr. ``controller``, a subclass of `RateController` or
    `WindowController`, runs every connection (``cc.algorithm = "python"``; the scenario's own
    ``cc`` keys are kept only if it was already a Python controller's, but for PLB and the
    feedback filter, which every controller has, and ``overrides`` may
    set the class's parameters: ``{"cc.alpha": 0.1}``). Raises ``ValueError`` naming the field,
    the value and what is allowed if the scenario is invalid, ``ControllerError`` (caused by the
    controller's own exception) if a Python controller fails, and ``KeyboardInterrupt`` within
    milliseconds of a Ctrl-C (nothing of the run is kept)."""
    s = load(scenario)
    if controller is not None:
        given = s.get("cc") if isinstance(s.get("cc"), dict) else {}
        cc = given if given.get("algorithm") == "python" else {k: v for k, v in given.items() if k in CC_COMMON}
        s["cc"] = {**cc, "algorithm": "python", "class": class_path(controller)}
    s = apply_overrides(s, overrides)
    if seed is not None:
        s["seed"] = seed
    python = prepare(s, controller)
    text = to_json(s)
    if not progress:
        return Result.from_native(*_core.run(text, controller=python))
    with RunProgress() as bar:
        out = _core.run(text, bar, controller=python)
    return Result.from_native(*out)
