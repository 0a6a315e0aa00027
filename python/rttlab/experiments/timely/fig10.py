"""TIMELY Fig. 10 (§4.4): per-connection rates over time, gradient (T_low/T_high 50/500 µs)
against a 50 µs queue-size target."""

from __future__ import annotations

from typing import Any

import pandas as pd

from ...plotting import styled, subplots
from .. import Check, Experiment, Outcome, Point, Run, register
from ..common import Plan, connection_series, grid_points, ref_row, sample_flows
from .testbed import run_plan as testbed_plan

VARIANTS = [("gradient 50/500 µs", 50, 500), ("target 50 µs", 50, 50)]
SHOWN = 4  # connections drawn per panel


def run_plan(quick: bool) -> Plan:
    p = testbed_plan(quick, longest_ms=500)
    return Plan(p.warmup_ms, p.measured_ms, p.seeds[:1])


def points(quick: bool) -> list[Point]:
    cells = [({"variant": v}, {"cc.t_low": f"{lo}us", "cc.t_high": f"{hi}us"}) for v, lo, hi in VARIANTS]
    return grid_points("timely-fig10", cells, run_plan(quick), timeseries="1ms")


@styled
def plot(d: pd.DataFrame, shown: list[int]) -> Any:
    fig, axes = subplots(1, 2, width=6.5, height=3.6)
    for ax, (variant, _, _) in zip(axes, VARIANTS):
        x = d[d.variant == variant]
        for f in shown:
            y = x[x.flow == f]
            ax.plot(y.time_ms, y.cc_rate_gbps * 1e3, linewidth=0.8, label=f"connection {f}")
        ax.axhline(500, color="black", linestyle=":", linewidth=0.8, label="fair share")
        ax.set(ylabel="Rate (Mbps)", title=variant)
    axes[-1].set_xlabel("Time (ms)")
    axes[0].legend(ncols=5, loc="upper right", fontsize=6)
    return fig


def analyse(runs: list[Run], quick: bool) -> Outcome:
    d = connection_series(runs, "variant", run_plan(quick).warmup_ms)
    per_flow = d.groupby(["variant", "flow"]).cc_rate_gbps.agg(["mean", "std"])
    cv = (per_flow["std"] / per_flow["mean"]).groupby("variant").mean()
    g, t = cv[VARIANTS[0][0]], cv[VARIANTS[1][0]]
    checks = [
        Check(
            "rates are smoother with the gradient than with a 50 µs target",
            g < t,
            f"mean coefficient of variation of a connection's rate: {g:.2f} vs {t:.2f}",
        )
    ]
    table = pd.DataFrame([ref_row(f"{v}: rate coefficient of variation", "", cv[v], None) for v, _, _ in VARIANTS])
    discussion = (
        f"A connection's rate varies by {g:.0%} of its mean with the gradient and {t:.0%} with a 50 µs "
        "target (mean over the 40 connections of the standard deviation over the mean of its 1 ms "
        "samples). "
        + (
            "The gradient is the smoother, as in the paper: the target controller drives the queue up and down through its single threshold."
            if g < t
            else "Here the gradient is not the smoother of the two."
        )
    )
    shown = sample_flows(40, SHOWN, seed=10)
    return Outcome(figure=plot(d, shown), table=table, checks=checks, data={"rates": d}, discussion=discussion)


register(
    Experiment(
        name="timely-fig10",
        group="timely",
        title="Fig. 10: per-connection rates, gradient vs 50 µs target",
        paper="Per-connection rates are smooth around the fair share with the gradient, and oscillate with a 50 µs queue-size target.",
        points=points,
        analyse=analyse,
    )
)
