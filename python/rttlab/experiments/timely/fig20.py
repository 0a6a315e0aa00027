"""TIMELY Fig. 20 (§6.2): median and 99th-percentile fabric RTT measured by pingers against
offered load, TIMELY against PFC alone (the runs of Fig. 19): under the default reading of the
workload, and PFC over TIMELY under every reading."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pandas as pd

from ...plotting import styled, subplots
from .. import Check, Experiment, Outcome, Run, register
from ..common import ref_row
from .clos import DEFAULT, SYSTEMS, by_load, clos_plan, load_points, per_reading, pfc_over_timely, ratios, verdicts

#: TIMELY lowers the median and p99 RTT by about this factor (§6.2 text).
PAPER_RATIO = {"ping_p50_us": 2.0, "ping_p99_us": 5.0}


@styled
def latency_plot(
    readings: pd.DataFrame, keys: dict[str, str], ylabel: str, more: Callable[[Any, Any], None] | None = None
) -> Any:
    """Two panels (median, p99) of ``keys`` against normalised offered load under the default
    reading, one line per system; then PFC / TIMELY of each key under every reading; then, if
    given, two panels ``more`` draws."""
    fig, axes = subplots(2, nrows=2 + (more is not None), width=6.5, height=5.0 + 2.4 * (more is not None))
    if more is not None:
        more(axes[4], axes[5])
    d = readings[readings.reading == DEFAULT]
    top = d.offered.max()
    for ax, (key, label) in zip(axes[2:], keys.items()):
        per_reading(ax, readings, pfc_over_timely(readings, key), f"{label}: PFC / TIMELY", "Every reading")
        ax.axhline(1.0, color="0.6", linestyle=":")
    for ax, (key, label) in zip(axes, keys.items()):
        for s in SYSTEMS:
            x = d[d.system == s]
            ax.plot(x.offered / top, x[key], marker="o", label=s)
        ax.set(
            xlabel="Offered load (normalised)", ylabel=f"{label} {ylabel}", yscale="log", title=f"Reading: {DEFAULT}"
        )
        ax.legend(loc="upper left")
    return fig


def lower_when_loaded(key: str) -> Callable[[pd.DataFrame], tuple[bool, str]]:
    """Whether ``key`` is lower with TIMELY at every load from 0.5 of the links up (one
    reading's rows of `by_load`), with PFC / TIMELY at those loads."""

    def test(d: pd.DataFrame) -> tuple[bool, str]:
        r = ratios(d, [key])[key]
        loaded = r[r.index >= 0.5]
        return bool((loaded > 1).all()), "(" + ", ".join(f"{load:.1f}: {x:.2f}×" for load, x in loaded.items()) + ")"

    return test


def lower_checks(readings: pd.DataFrame, keys: dict[str, str]) -> tuple[list[Check], str]:
    """One check per key ("… is lower with TIMELY from 0.5 load up") over every reading, and a
    sentence naming the readings under which each holds."""
    checks, held = [], []
    for key, what in keys.items():
        ok, text, under = verdicts(readings, lower_when_loaded(key))
        checks.append(
            Check(
                f"{what} is lower with TIMELY at every load from 0.5 of the links up (reading {DEFAULT}; every reading listed, PFC / TIMELY)",
                ok,
                text,
            )
        )
        held.append(f"{what} is lower with TIMELY under {', '.join(under) if under else 'no reading'}")
    return checks, "; ".join(held) + "."


def analyse(runs: list[Run], quick: bool) -> Outcome:
    readings = by_load(runs, ["reading", "system", "load"])
    d = readings[readings.reading == DEFAULT].drop(columns="reading")
    r = ratios(d, list(PAPER_RATIO))
    hi = max(clos_plan(quick).loads)
    checks, held = lower_checks(readings, {"ping_p99_us": "pinger p99 RTT", "ping_p50_us": "pinger median RTT"})
    top = readings[readings.reading != DEFAULT].load.max()
    ro = readings.set_index(["reading", "system", "load"])
    others = [m for m in readings.reading.unique() if m != DEFAULT]
    v = d.set_index(["system", "load"])
    table = pd.DataFrame(
        [
            ref_row(f"PFC / TIMELY {k.split('_')[1]} ping RTT at {hi:.1f} load", "×", r[k][hi], PAPER_RATIO[k])
            for k in PAPER_RATIO
        ]
        + [
            ref_row(f"{s}: {q} ping RTT at {hi:.1f} load", "µs", v[f"ping_{q}_us"][s][hi], None)
            for s in SYSTEMS
            for q in ("p50", "p99")
        ]
        + [
            ref_row(
                f"PFC / TIMELY {q} ping RTT at {top:.1f} load, reading {m}",
                "×",
                ro[f"ping_{q}_us"][m]["PFC"][top] / ro[f"ping_{q}_us"][m]["TIMELY"][top],
                PAPER_RATIO[f"ping_{q}_us"],
            )
            for m in others
            for q in ("p50", "p99")
        ]
    )
    discussion = (
        f"{held} Under reading {DEFAULT}: at {hi:.1f} of the host links PFC's pingers see {v.ping_p50_us['PFC'][hi]:.0f} µs median and "
        f"{v.ping_p99_us['PFC'][hi]:.0f} µs p99, TIMELY's {v.ping_p50_us['TIMELY'][hi]:.0f} and "
        f"{v.ping_p99_us['TIMELY'][hi]:.0f} µs: {r.ping_p50_us[hi]:.1f}× and {r.ping_p99_us[hi]:.1f}× lower "
        "(paper: about 2× and 5×). At light load both see the idle fabric (≈ 13 µs for 6 hops of 1 µs and "
        "64 B probes), since no queue builds before the rate controller has anything to do."
    )
    fig = latency_plot(readings, {"ping_p50_us": "Median", "ping_p99_us": "99th-percentile"}, "RTT (µs)")
    return Outcome(figure=fig, table=table, checks=checks, data={"summary": readings}, discussion=discussion)


register(
    Experiment(
        name="timely-fig20",
        group="timely",
        title="Fig. 20: pinger RTT against load (Clos)",
        paper="TIMELY reduces the median and 99th-percentile RTT measured by pingers by 2× and 5× compared to PFC.",
        points=load_points,
        analyse=analyse,
    )
)
