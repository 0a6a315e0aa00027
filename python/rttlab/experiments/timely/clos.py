"""The Clos fabric of TIMELY §6.2 (scenarios/timely-clos-rpc.toml): RPC load sweeps with
pingers, for Figs. 19–22, under each reading of the workload, and the tidy frame they share.

The paper says a client "picks a server from a set of servers with the longest path" and that
TIMELY runs an independent instance per flow (§3), but not how large the set is, so the
readings (`READINGS`) are the size m of each client's set: m servers kept per client, assigned
so that every server serves m clients (no hot servers), with one persistent connection per pair
that keeps its rate across RPCs; or every RPC's server drawn anew among all of them.

Full runs: the k = 8 fat-tree (128 hosts), 40 ms after a 10 ms warm-up; the default reading
(`DEFAULT`) at offered load 0.1–0.9 of the host links with 2 seeds, the others at 0.1, 0.3, …,
0.9 with one.
``--quick``: a k = 4 fat-tree (16 hosts), one seed of 10 ms after 5 ms, three loads. Loads are
per host link (requests out plus responses out), and the figures normalise them to the largest
offered load, as the paper does.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pandas as pd

from ...plotting import PALETTE
from .. import Point, Run
from ..common import Plan
from ..common import scenario as preset

FILE = "timely-clos-rpc.toml"
SYSTEMS = {"TIMELY": "timely", "PFC": "none"}
RPC_BYTES = 64_000
LINK_BPS = 10e9


#: Each client's server set: m longest-path servers kept per client (balanced assignment,
#: `workloads.0.servers_per_client`), or `None`: each RPC's server drawn anew among all of them.
READINGS: dict[str, int | None] = {"m = 1": 1, "m = 2": 2, "m = 4": 4, "m = 8": 8, "per RPC": None}
#: The reading the figures' main panels and the checks' verdicts use, the scenario file's. Every
#: persistent reading makes TIMELY's rate bind and moves the queue to the hosts, as §6.2 says
#: happened; they reproduce Fig. 20's pinger gains, per RPC reproduces none of Figs. 19–21. Of
#: them m = 4 comes closest to Fig. 20's 2× and 5× at k = 8 (docs/model.md, "RPC").
DEFAULT = "m = 4"


@dataclass(frozen=True)
class ClosPlan:
    k: int
    run: Plan
    loads: tuple[float, ...]
    #: The other readings' loads and seeds (fewer: they are side panels).
    reading_loads: tuple[float, ...]
    reading_seeds: tuple[int, ...]


FULL = ClosPlan(
    8,
    Plan(warmup_ms=10, measured_ms=40, seeds=(1, 2)),
    tuple(round(0.1 * i, 1) for i in range(1, 10)),
    (0.1, 0.3, 0.5, 0.7, 0.9),
    (1,),
)
QUICK = ClosPlan(4, Plan(warmup_ms=5, measured_ms=10, seeds=(1,)), (0.2, 0.5, 0.8), (0.2, 0.5, 0.8), (1,))


def clos_plan(quick: bool) -> ClosPlan:
    return QUICK if quick else FULL


def rpc_rate(load: float) -> float:
    """RPCs per second per client that offer ``load`` on every host link (each link carries a
    host's requests and the responses it serves)."""
    return load * LINK_BPS / (2 * RPC_BYTES * 8)


def reading_keys(reading: str) -> dict[str, Any]:
    """The scenario keys of a workload reading."""
    m = READINGS[reading]
    return {"workloads.0.servers_per_client": m, "workloads.0.server_assignment": "balanced"}


def scenario(
    name: str,
    system: str,
    load: float,
    p: ClosPlan,
    seed: int,
    extra: dict[str, Any] | None = None,
    reading: str = DEFAULT,
) -> dict[str, Any]:
    overrides = {
        "topology.k": p.k,
        "cc.algorithm": SYSTEMS[system],
        "workloads.0.rate": rpc_rate(load),
        **reading_keys(reading),
        **(extra or {}),
    }
    return preset(name, overrides, p.run, seed, file=FILE)


def reading_grid(p: ClosPlan, reading: str) -> tuple[tuple[float, ...], tuple[int, ...]]:
    """The loads and seeds a reading runs at."""
    return (p.loads, p.run.seeds) if reading == DEFAULT else (p.reading_loads, p.reading_seeds)


def load_points(quick: bool) -> list[Point]:
    """The load sweep Figs. 19–21 share (so it runs once), under every reading."""
    p = clos_plan(quick)
    return [
        Point(
            {"reading": reading, "system": s, "load": load, "seed": seed},
            scenario("timely-clos", s, load, p, seed, reading=reading),
        )
        for reading in READINGS
        for s in SYSTEMS
        for load in reading_grid(p, reading)[0]
        for seed in reading_grid(p, reading)[1]
    ]


def rows(runs: list[Run]) -> pd.DataFrame:
    """One row per run: labels, the RPC generator's offered and accepted load (fractions of the
    host links), the busiest host link direction's utilization and the median one's, RPC latency (RPCs still open at the end count at their age: `rpcs_censored`),
    pinger RTT, PFC pauses, and what the hosts held back on the RPC connections: the fraction
    of segments released below line rate, the mean wait of a segment for its connection's rate,
    and the mean bytes per host waiting to be released (TIMELY §6.2's "queuing moved to the
    end host")."""
    out = []
    for r in runs:
        g = r.result.groups.set_index("kind")
        hosts = r.result.meta["scenario"]["topology"]["k"] ** 3 / 4
        s = r.result.summary
        f = r.result.flows
        rpc = f[f.group == g.index.get_loc("rpc")]
        segments = rpc.segments.sum()
        p = r.result.ports
        names = p["port"].astype(str)
        host_links = (
            p[names.str.match(r"^h\d+-") | names.str.contains(r"-h\d+$")]
            .groupby("port", observed=True)
            .utilization.sum()
        )
        out.append(
            {
                **r.labels,
                "offered": g.offered_gbps["rpc"] * 1e9 / (hosts * LINK_BPS),
                "accepted": g.goodput_gbps["rpc"] * 1e9 / (hosts * LINK_BPS),
                "hottest_link": host_links.max(),
                "link_p50": host_links.median(),
                "rpcs_completed": g.rpcs_completed["rpc"],
                "rpcs_censored": g.rpcs_censored["rpc"],
                "rpc_p50_us": s["rpc_p50_us"],
                "rpc_p99_us": s["rpc_p99_us"],
                "ping_p50_us": s["ping_p50_us"],
                "ping_p99_us": s["ping_p99_us"],
                "pauses": s["pauses"],
                "below_line_rate": rpc.segments_below_line_rate.sum() / segments if segments else float("nan"),
                "rate_wait_us": rpc.rate_wait_us.sum() / segments if segments else float("nan"),
                "host_queue_kb": rpc.host_queue_avg_bytes.sum() / hosts / 1e3,
            }
        )
    return pd.DataFrame(out)


def by_load(runs: list[Run], by: list[str]) -> pd.DataFrame:
    """`rows` averaged over seeds."""
    d = rows(runs).drop(columns="seed")
    return d.groupby(by, sort=False).mean().reset_index()


def verdicts(d: pd.DataFrame, test: Callable[[pd.DataFrame], tuple[bool, str]]) -> tuple[bool, str, list[str]]:
    """A stated trend under every reading: whether it holds under `DEFAULT`; for each reading
    ✔ or ✘ with the numbers that decide it; and the readings under which it holds (``test``
    takes one reading's rows)."""
    out = {reading: test(x) for reading, x in d.groupby("reading", sort=False)}
    text = "; ".join(f"{reading} {'✔' if ok else '✘'} {why}" for reading, (ok, why) in out.items())
    return out[DEFAULT][0], text, [reading for reading, (ok, _) in out.items() if ok]


def ratios(d: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """PFC over TIMELY for ``keys``, per load (one reading's rows of `by_load`)."""
    v = d.set_index(["system", "load"])
    return pd.DataFrame({k: v[k]["PFC"] / v[k]["TIMELY"] for k in keys})


def per_reading(
    ax: Any,
    d: pd.DataFrame,
    y: Callable[[pd.DataFrame], pd.Series],
    ylabel: str,
    title: str,
    *,
    logy: bool = False,
    systems: tuple[str, ...] = ("TIMELY",),
) -> None:
    """One line per reading of ``y`` (a function of one system's rows of `by_load`) against
    normalised offered load: TIMELY solid, PFC dashed when asked."""
    top = d.offered.max()
    for i, (reading, x) in enumerate(d.groupby("reading", sort=False)):
        for s in systems:
            v = x[x.system == s].sort_values("load")
            label = reading if len(systems) == 1 else f"{reading}, {s}"
            ax.plot(
                v.offered / top,
                y(v),
                marker="o",
                markersize=3,
                color=PALETTE[i],
                linestyle="-" if s == "TIMELY" else "--",
                label=label,
            )
    ax.set(xlabel="Offered load (normalised)", ylabel=ylabel, title=title)
    if logy:
        ax.set_yscale("log")
    ax.legend(fontsize=5.5, ncol=1 + (len(systems) > 1))


def pfc_over_timely(d: pd.DataFrame, key: str) -> Callable[[pd.DataFrame], pd.Series]:
    """For `per_reading`: PFC's ``key`` over TIMELY's at each load of the reading."""

    def ratio(timely: pd.DataFrame) -> pd.Series:
        return ratios(d[d.reading == timely.reading.iloc[0]], [key])[key].sort_index().to_numpy()

    return ratio
