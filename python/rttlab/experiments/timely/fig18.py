"""TIMELY Fig. 18 (§6.1): hyperactive increase. 10 clients x 10 connections; at a set time
every client closes 9 of its 10 (`flows.stop`), and the fair share of the one left jumps from
200 Mbps to 2 Gbps. How fast does it get there with HAI and with a fixed increment?

Algorithm 1 applies HAI only in the gradient branch; once the queue drains the RTT falls
below T_low, where the increment is always δ. HPCC's ns-3 applies it to every increase
(`cc.hai_counter = "any_increase"`); both are run."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ...plotting import mark_paper, styled, subplots
from .. import Check, Experiment, Outcome, Point, Run, register
from ..common import Plan, grid_points, interval_throughput, ref_row
from .testbed import SETTINGS, TESTBED, plan, with_settings

VARIANTS = [
    ("fixed increment", {"cc.hai_factor": 1.0}),
    ("HAI, Algorithm 1", {}),
    ("HAI on every increase", {"cc.hai_counter": "any_increase"}),
]
#: Published: (variant, Gbps) -> ms after the close (§6.1 text).
PAPER = {("HAI, Algorithm 1", 1.5): 50, ("HAI, Algorithm 1", 2.0): 100, ("fixed increment", 1.5): 140}
LEVELS_GBPS = [1.5, 1.9]  # 1.9 = 95 % of the new fair share


def run_plan(quick: bool) -> tuple[Plan, int]:
    """The run (warm-up = time of the close) and how long it goes on after the close (ms)."""
    p = plan(quick)
    after = 150 if quick else 250
    return Plan(p.warmup_ms + 100, after, p.seeds), after


def points(quick: bool) -> list[Point]:
    p, _ = run_plan(quick)
    close = f"{p.warmup_ms}ms"
    flows = [
        {"src": "1-10", "dst": 0, "connections": 1, "start_jitter": "10us"},
        {"src": "1-10", "dst": 0, "connections": 9, "start_jitter": "10us", "stop": close},
    ]
    out = []
    for setting, overrides, seeds in with_settings(p):
        cells = [({"setting": setting, "variant": v}, {**overrides, **o, "flows": flows}) for v, o in VARIANTS]
        out += grid_points("timely-fig18", cells, seeds, timeseries="1ms")
    return out


def crossing(curve: pd.Series, level: float) -> float:
    """First time (ms after the close) the curve reaches ``level``; NaN if it never does."""
    hit = curve[curve >= level]
    return float(hit.index[0]) if len(hit) else float("nan")


@styled
def plot(curves: pd.DataFrame, one: pd.DataFrame) -> Any:
    fig, (ax,) = subplots(1, width=4.8, height=3.0)
    for _i, (v, _) in enumerate(VARIANTS):
        c = curves[curves.variant == v]
        line = ax.plot(c.after_ms, c.throughput_gbps, label=f"{v} (mean of 10)")[0]
        o = one[one.variant == v]
        ax.plot(o.after_ms, o.throughput_gbps, color=line.get_color(), alpha=0.3, linewidth=0.6)
    mark_paper(
        ax, [PAPER[k] for k in PAPER], [k[1] for k in PAPER], label="paper: HAI 1.5 @ 50, 2 @ 100; fixed 1.5 @ 140 ms"
    )
    ax.axhline(2.0, color="black", linestyle=":", linewidth=0.8)
    ax.set(
        xlabel="Time after 9 of 10 connections close (ms)",
        ylabel="Throughput of a remaining connection (Gbps)",
        ylim=(0, 3),
    )
    ax.legend(loc="lower right", fontsize=6)
    return fig


def climb(runs: list[Run], after_close_ms: float) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """The remaining connections' throughput after the close, its mean per variant, and each
    variant's time to each of `LEVELS_GBPS`."""
    frames = []
    for r in runs:
        t = interval_throughput(r.result.timeseries)
        t = t[t.flow < 10]  # the connections that stay open
        frames.append(t.assign(variant=r.labels["variant"], seed=r.labels["seed"], after_ms=t.time_ms - after_close_ms))
    d = pd.concat(frames, ignore_index=True)
    d = d[d.after_ms > -50]
    curves = d.groupby(["variant", "after_ms"], sort=False).throughput_gbps.mean().reset_index()
    times = {
        (v, lvl): crossing(
            curves[(curves.variant == v) & (curves.after_ms > 0)].set_index("after_ms").throughput_gbps, lvl
        )
        for v, _ in VARIANTS
        for lvl in LEVELS_GBPS
    }
    return d, curves, times


def analyse(runs: list[Run], quick: bool) -> Outcome:
    p, _after = run_plan(quick)
    d, curves, times = climb([r for r in runs if r.labels["setting"] == TESTBED], p.warmup_ms)
    one = d[(d.flow == 0) & (d.seed == p.seeds[0])]
    fixed, alg1, every = (v for v, _ in VARIANTS)
    others = {s: climb([r for r in runs if r.labels["setting"] == s], p.warmup_ms)[2] for s in SETTINGS if s != TESTBED}

    settled = curves[curves.after_ms >= 20]
    plateau = settled.groupby("variant").throughput_gbps.mean()

    def sooner(a: str, b: str) -> bool:
        return bool(np.nan_to_num(times[a, 1.5], nan=np.inf) < np.nan_to_num(times[b, 1.5], nan=np.inf))

    checks = [
        Check(
            "HAI (on every increase) reaches 1.5 Gbps sooner than a fixed increment",
            sooner(every, fixed),
            f"{times[every, 1.5]:.0f} vs {times[fixed, 1.5]:.0f} ms",
        ),
        Check(
            "HAI as in Algorithm 1 reaches 1.5 Gbps sooner than a fixed increment",
            sooner(alg1, fixed),
            f"{times[alg1, 1.5]:.0f} vs {times[fixed, 1.5]:.0f} ms",
        ),
        Check(
            "with HAI the new fair share is reached within 100 ms",
            times[every, 1.9] <= 100,
            f"{times[every, 1.9]:.0f} ms to 1.9 Gbps",
        ),
    ]
    table = pd.DataFrame(
        [
            ref_row(f"{v}: time to {lvl:g} Gbps", "ms", times[v, lvl], PAPER.get((v, 2.0 if lvl == 1.9 else lvl)))
            for v, _ in VARIANTS
            for lvl in LEVELS_GBPS
        ]
        + [
            ref_row(f"{s}: {v}: time to 1.5 Gbps", "ms", t[v, 1.5], PAPER.get((v, 1.5)))
            for s, t in others.items()
            for v, _ in VARIANTS
            if np.isfinite(t[v, 1.5])  # one not reached in the run is said in the discussion
        ]
    )
    discussion = (
        "After the close the queue drains within a millisecond and RTT samples fall below T_low, "
        "where Algorithm 1 adds δ = 10 Mbps per completion without HAI. So the fixed increment and "
        f"Algorithm 1's HAI behave alike: {times[fixed, 1.5]:.0f} and {times[alg1, 1.5]:.0f} ms to 1.5 Gbps "
        "(paper 140 and 50 ms). The climb is exponential rather than linear because completions come "
        "faster as the rate grows (one per 16 KB), which is also why the fixed increment is 5× faster "
        "than the paper's. Applying HAI to every increase, as HPCC's ns-3 does, gets there in "
        f"{times[every, 1.5]:.0f} ms and to 1.9 Gbps in {times[every, 1.9]:.0f} ms: from 20 ms after the close "
        f"on, its mean holds at {plateau[every]:.2f} Gbps ({plateau[every] / 2:.0%} of the new fair share; fixed "
        f"increment {plateau[fixed]:.2f}, Algorithm 1 {plateau[alg1]:.2f}) against the 95 % (1.9 Gbps) the "
        "check counts as reached. The paper's HAI result "
        "needs either that reading or RTTs that stay above T_low after the close; the paper does not "
        "say which, so both are options here (cc.hai_counter). Under the testbed's other settings "
        "(first seed; fixed increment / Algorithm 1 / every increase, ms to 1.5 Gbps): "
        + "; ".join(
            f"{s}: " + " / ".join(f"{t[v, 1.5]:.0f}" if np.isfinite(t[v, 1.5]) else "not reached" for v, _ in VARIANTS)
            for s, t in others.items()
        )
        + (
            ". In none does Algorithm 1's HAI climb even a fifth faster than the fixed increment, where "
            "the paper's is 2.8× faster (50 against 140 ms)."
            if all(t[alg1, 1.5] >= 0.8 * t[fixed, 1.5] for t in others.values())
            else "."
        )
    )
    return Outcome(
        figure=plot(curves, one),
        table=table,
        checks=checks,
        data={"throughput": d, "mean": curves},
        discussion=discussion,
    )


register(
    Experiment(
        name="timely-fig18",
        group="timely",
        title="Fig. 18: hyperactive increase",
        paper=(
            "10 clients × 10 connections, then every client closes 9: HAI ramps a remaining "
            "connection from 200 Mbps to 1.5 Gbps within 50 ms and to the new 2 Gbps fair share at "
            "100 ms; a fixed additive increment reaches 1.5 Gbps only after 140 ms."
        ),
        points=points,
        analyse=analyse,
    )
)
