"""TIMELY Fig. 20 (§6.2): median and 99th-percentile fabric RTT measured by pingers against
offered load, TIMELY against PFC alone (the runs of Fig. 19)."""

from __future__ import annotations

from typing import Any

import pandas as pd

from .. import Check, Experiment, Outcome, Run, register
from ...plotting import styled, subplots
from .clos import SYSTEMS, by_load, clos_plan, load_points
from ..common import ref_row

#: TIMELY lowers the median and p99 RTT by about this factor (§6.2 text).
PAPER_RATIO = {"ping_p50_us": 2.0, "ping_p99_us": 5.0}


@styled
def latency_plot(d: pd.DataFrame, keys: dict[str, str], ylabel: str) -> Any:
    """Two panels (median, p99) of ``keys`` against normalised offered load, one line per system."""
    fig, axes = subplots(2, width=6.5, height=2.6)
    top = d.offered.max()
    for ax, (key, label) in zip(axes, keys.items()):
        for s in SYSTEMS:
            x = d[d.system == s]
            ax.plot(x.offered / top, x[key], marker="o", label=s)
        ax.set(xlabel="Offered load (normalised)", ylabel=f"{label} {ylabel}", yscale="log")
        ax.legend(loc="upper left")
    return fig


def ratios(d: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """PFC over TIMELY for ``keys``, per load."""
    v = d.set_index(["system", "load"])
    return pd.DataFrame({k: v[k]["PFC"] / v[k]["TIMELY"] for k in keys})


def lower_when_loaded(r: pd.DataFrame, key: str, what: str) -> Check:
    """``what`` is lower with TIMELY at every load from 0.5 of the links up (``r``: `ratios`)."""
    loaded = r[key][r.index >= 0.5]
    return Check(
        f"{what} is lower with TIMELY (every load from 0.5 of the links up)",
        bool((loaded > 1).all()),
        ", ".join(f"{load:.1f}: {x:.1f}×" for load, x in loaded.items()) + " (PFC / TIMELY)",
    )


def analyse(runs: list[Run], quick: bool) -> Outcome:
    d = by_load(runs, ["system", "load"])
    r = ratios(d, list(PAPER_RATIO))
    hi = max(clos_plan(quick).loads)
    checks = [lower_when_loaded(r, "ping_p99_us", "pinger p99 RTT"), lower_when_loaded(r, "ping_p50_us", "pinger median RTT")]
    v = d.set_index(["system", "load"])
    table = pd.DataFrame(
        [ref_row(f"PFC / TIMELY {k.split('_')[1]} ping RTT at {hi:.1f} load", "×", r[k][hi], PAPER_RATIO[k]) for k in PAPER_RATIO]
        + [ref_row(f"{s}: {q} ping RTT at {hi:.1f} load", "µs", v[f"ping_{q}_us"][s][hi], None) for s in SYSTEMS for q in ("p50", "p99")]
    )
    discussion = (
        f"At {hi:.1f} of the host links PFC's pingers see {v.ping_p50_us['PFC'][hi]:.0f} µs median and "
        f"{v.ping_p99_us['PFC'][hi]:.0f} µs p99, TIMELY's {v.ping_p50_us['TIMELY'][hi]:.0f} and "
        f"{v.ping_p99_us['TIMELY'][hi]:.0f} µs: {r.ping_p50_us[hi]:.1f}× and {r.ping_p99_us[hi]:.1f}× lower "
        "(paper: about 2× and 5×). At light load both see the idle fabric (≈ 13 µs for 6 hops of 1 µs and "
        "64 B probes), since no queue builds before the rate controller has anything to do."
    )
    return Outcome(figure=latency_plot(d, {"ping_p50_us": "Median", "ping_p99_us": "99th-percentile"}, "RTT (µs)"), table=table, checks=checks, data={"summary": d}, discussion=discussion)


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
