"""Helpers every experiment group shares: run lengths (`Plan`), scenarios from the shipped
presets with overrides, grids of points, and the tidy frames the analyses build (summaries, means
over seeds, per-connection throughput series, rows of rttlab's numbers beside a paper's)."""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np
import pandas as pd

from .. import presets
from ..scenario import set_key
from . import Point, Run


@dataclass(frozen=True)
class Plan:
    """Run length: statistics count after ``warmup_ms``, for ``measured_ms``, once per seed."""

    warmup_ms: int
    measured_ms: int
    seeds: tuple[int, ...]

    @property
    def duration(self) -> str:
        return f"{self.warmup_ms + self.measured_ms}ms"


#: The TIMELY testbed's server on one 20 Gbps link, where the presets bond two 10 Gbps ports: as
#: CS244'19's reproduction ran it ("NS-2 doesn't provide any traffic balancing", §2.1).
ONE_LINK = {"topology.host_links": [{"host": 0, "rate": "20Gbps"}]}


@cache
def _preset(file: str) -> dict[str, Any]:
    return presets.load(file)


def scenario(
    name: str,
    overrides: Mapping[str, Any],
    p: Plan,
    seed: int,
    *,
    file: str = "timely-testbed.toml",
    timeseries: str | None = None,
) -> dict[str, Any]:
    """A shipped preset (default: the TIMELY testbed) with dotted-key ``overrides``, run length ``p``, and traces off (only a
    per-connection time series at ``timeseries``, when asked)."""
    s = copy.deepcopy(_preset(file))
    for key, value in overrides.items():
        set_key(s, key, value)
    s["name"], s["seed"], s["duration"], s["warmup"] = name, seed, p.duration, f"{p.warmup_ms}ms"
    s["measure"] = {"timeseries_interval": timeseries} if timeseries else {}
    return s


def grid_points(
    name: str, cells: Iterable[tuple[Mapping[str, Any], Mapping[str, Any]]], p: Plan, **kw: Any
) -> list[Point]:
    """One point per (labels, overrides) cell and seed."""
    return [
        Point({**labels, "seed": seed}, scenario(name, overrides, p, seed, **kw))
        for labels, overrides in cells
        for seed in p.seeds
    ]


SUMMARY = ["throughput_gbps", "rtt_avg_us", "rtt_p99_us", "jain", "pauses"]


def summaries(runs: list[Run], keys: list[str] = SUMMARY) -> pd.DataFrame:
    """One row per run: its labels and summary ``keys``."""
    return pd.DataFrame([{**r.labels, **{k: r.result.summary[k] for k in keys}} for r in runs])


def summary_row(run: Run, keys: list[str], **computed: Any) -> dict[str, Any]:
    """One run's row: its labels, what the caller computed from its tables, and summary ``keys``."""
    return {**run.labels, **computed, **{k: run.result.summary[k] for k in keys}}


def over_seeds(df: pd.DataFrame, by: list[str], keys: list[str] = SUMMARY) -> pd.DataFrame:
    """Mean and sample standard deviation (``KEY_sd``; 0 for one seed) over seeds."""
    g = df.groupby(by, sort=False, dropna=False)[keys]
    mean, sd = g.mean(), g.std(ddof=1).fillna(0.0).add_suffix("_sd")
    return mean.join(sd).reset_index()


def ref_row(quantity: str, unit: str, rttlab: float | None, paper: float | None) -> dict[str, Any]:
    """One row of an experiment's table of our numbers beside the paper's."""
    return {"quantity": quantity, "unit": unit, "rttlab": rttlab, "paper": paper}


def interval_throughput(ts: pd.DataFrame, samples: int = 1) -> pd.DataFrame:
    """Per-connection throughput (Gbps, payload) over the last ``samples`` time-series
    intervals, from the delivered-bytes counter: columns time_ms (interval end), flow,
    throughput_gbps, cc_rate_gbps (the controller's rate), rtt_us (mean RTT of the last interval's completions)."""
    ts = ts.sort_values(["flow", "time_us"])
    dt_s = ts.groupby("flow").time_us.diff(samples) / 1e6
    got = ts.groupby("flow").delivered_bytes.diff(samples)
    out = pd.DataFrame(
        {
            "time_ms": ts.time_us / 1e3,
            "flow": ts.flow,
            "throughput_gbps": got * 8 / dt_s / 1e9,
            "cc_rate_gbps": ts.cc_rate_gbps,
            "rtt_us": ts.rtt_us,
        }
    )
    return out.dropna(subset=["throughput_gbps"]).reset_index(drop=True)


def connection_series(
    runs: list[Run], label: str, after_ms: float, flows: list[int] | None = None, samples: int = 1
) -> pd.DataFrame:
    """`interval_throughput` of every run after ``after_ms``, for ``flows`` (default: all),
    with the run's ``label`` as a column."""
    frames = []
    for r in runs:
        t = interval_throughput(r.result.timeseries, samples)
        keep = (t.time_ms > after_ms) & (t.flow.isin(flows) if flows is not None else True)
        frames.append(t[keep].assign(**{label: r.labels[label]}))
    return pd.concat(frames, ignore_index=True)


def connection_stats(d: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """Mean and standard deviation of each connection's rate and throughput (Mbps) and RTT (µs)."""
    g = d.groupby(by)
    out = g.agg(
        rate_mean=("cc_rate_gbps", "mean"),
        rate_sd=("cc_rate_gbps", "std"),
        thr_mean=("throughput_gbps", "mean"),
        thr_sd=("throughput_gbps", "std"),
    )
    out = out * 1e3
    return out.join(g.agg(rtt_mean=("rtt_us", "mean"), rtt_sd=("rtt_us", "std")))


def sample_flows(n_flows: int, k: int, seed: int) -> list[int]:
    """``k`` connections drawn at random (reproducibly from ``seed``), in increasing order."""
    return sorted(np.random.default_rng(seed).choice(n_flows, size=k, replace=False).tolist())
