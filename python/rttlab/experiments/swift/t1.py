"""The Swift paper's testbed T1 (scenarios/swift-t1.toml) every Swift experiment starts from, and
the helpers they share.

T1 here: 4 racks x 16 hosts on a leaf-spine, 50 Gbps host links, 4 KB payloads, lossy, a host
model of 250 ns per packet plus a 100 Gbps copy. Host 0 receives; hosts 16.. are in other racks.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from .. import Point, Run
from ..common import Plan
from ..common import scenario as testbed_scenario
from ..common import summaries as testbed_summaries

FILE = "swift-t1.toml"
LINE_GBPS = 50.0


def scenario(
    name: str, overrides: Mapping[str, Any], p: Plan, seed: int, timeseries: str | None = None
) -> dict[str, Any]:
    """The T1 preset with dotted-key ``overrides`` and run length ``p``."""
    return testbed_scenario(name, overrides, p, seed, file=FILE, timeseries=timeseries)


def points(
    name: str, cells: list[tuple[dict[str, Any], dict[str, Any]]], p: Plan, timeseries: str | None = None
) -> list[Point]:
    """One point per (labels, overrides) cell and seed."""
    return [
        Point({**labels, "seed": seed}, scenario(name, overrides, p, seed, timeseries))
        for labels, overrides in cells
        for seed in p.seeds
    ]


def incast(
    senders: str, connections: int, *, write: str | None = None, start_jitter: str = "10us"
) -> list[dict[str, Any]]:
    """Backlogged flows from every host of ``senders`` to host 0."""
    g: dict[str, Any] = {"src": senders, "dst": 0, "connections": connections, "start_jitter": start_jitter}
    if write:
        g["write"] = write
    return [g]


KEYS = ["goodput_gbps", "rtt_avg_us", "rtt_p99_us", "loss_rate", "jain", "timeouts"]


def summaries(runs: list[Run], keys: list[str] = KEYS) -> pd.DataFrame:
    """One row per point: its labels and summary ``keys``, averaged over seeds."""
    df = testbed_summaries(runs, keys)
    by = [c for c in df.columns if c not in keys and c != "seed"]
    return df.drop(columns="seed").groupby(by, sort=False).mean().reset_index()


def jain(x: Any) -> float:
    """Jain's fairness index of the values ``x``."""
    x = np.asarray(x, dtype=float)
    return float(x.sum() ** 2 / (len(x) * (x**2).sum())) if len(x) and (x**2).sum() > 0 else float("nan")
