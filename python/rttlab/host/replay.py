"""The differential test: every decision a kernel controller logged, replayed through
crates/cc's controller of the same algorithm from the kernel's own state before it
(`_core.cc_replay`), with the parameters as the kernel held them (the scenario's, rounded to
the program's fixed point), so that what differs is the kernel's arithmetic alone.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pandas as pd

from .. import _core
from ..result import Result
from .logs import EVENT
from .params import ONE

Q32 = 2.0**32


def reference_cc(cc: dict[str, Any], params: dict[str, int]) -> dict[str, Any]:
    """The scenario's ``[cc]`` with each parameter as the kernel program holds it."""
    out = dict(cc)
    for key, value in params.items():
        if key.endswith("_q16"):
            out[key[: -len("_q16")]] = value / ONE
        elif key.endswith("_q32"):
            out[key[: -len("_q32")]] = value / Q32
    return out


def replay(result: Result) -> pd.DataFrame:
    """One row per logged record of a `rttlab.host.run(..., decisions=True)` result: its flow,
    kind, the kernel's decision and the reference's, the bound the fixed point allows, whether
    the decision is exempt (its branch turned on a value within rounding of a threshold) and
    whether it is within the bound. Records that decide nothing have NaN decisions."""
    host = result.meta["host"]
    scenario = dict(result.meta["scenario"])
    scenario["cc"] = reference_cc(scenario["cc"], host["params"])
    text = json.dumps(scenario)
    params = host["params"]
    line_rate = params.get("max_rate_bps", 0)
    seg_ser = params.get("seg_ser_ps", 0)
    log = result.tables["decisions"]
    frames = []
    for port, rec in log.groupby("port", sort=False):
        # Every field but the connection's, in the schema's order (`logs.FIELDS`; the Rust
        # replay's `Records`).
        cols = tuple(
            np.ascontiguousarray(rec[name].to_numpy(), dtype=EVENT[name]) for name in EVENT.names if name != "port"
        )
        kernel, reference, bound, exempt = _core.cc_replay(text, line_rate, host["mss_bytes"], seg_ser, cols)
        frames.append(
            pd.DataFrame(
                {
                    "port": port,
                    "t_ns": rec["t_ns"].to_numpy(),
                    "kind": rec["kind"].to_numpy(),
                    "kernel": kernel,
                    "reference": reference,
                    "bound": bound,
                    "exempt": exempt,
                }
            )
        )
    out = (
        pd.concat(frames, ignore_index=True)
        if frames
        else pd.DataFrame(columns=["port", "t_ns", "kind", "kernel", "reference", "bound", "exempt"])
    )
    out["error"] = (out["kernel"] - out["reference"]).abs()
    out["within"] = out["error"] <= out["bound"]
    return out
