"""The Clos fabric of TIMELY §6.2 (scenarios/timely-clos-rpc.toml): RPC load sweeps with
pingers, for Figs. 19–22, and the tidy frame they share.

Full runs: the k = 8 fat-tree (128 hosts), 2 seeds of 40 ms after a 10 ms warm-up, offered
load 0.1–0.9 of the host links, each RPC to a server drawn anew among the longest-path peers. ``--quick``: a k = 4 fat-tree (16 hosts), one seed of 10 ms
after 5 ms, three loads. Loads are per host link (requests out plus responses out), and the
figures normalise them to the largest offered load, as the paper does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd

from .. import Point, Run
from ..common import Plan, scenario as preset

FILE = "timely-clos-rpc.toml"
SYSTEMS = {"TIMELY": "timely", "PFC": "none"}
RPC_BYTES = 64_000
LINK_BPS = 10e9


@dataclass(frozen=True)
class ClosPlan:
    k: int
    run: Plan
    loads: tuple[float, ...]


FULL = ClosPlan(8, Plan(warmup_ms=10, measured_ms=40, seeds=(1, 2)), tuple(round(0.1 * i, 1) for i in range(1, 10)))
QUICK = ClosPlan(4, Plan(warmup_ms=5, measured_ms=10, seeds=(1,)), (0.2, 0.5, 0.8))


def clos_plan(quick: bool) -> ClosPlan:
    return QUICK if quick else FULL


def rpc_rate(load: float) -> float:
    """RPCs per second per client that offer ``load`` on every host link (each link carries a
    host's requests and the responses it serves)."""
    return load * LINK_BPS / (2 * RPC_BYTES * 8)


def scenario(name: str, system: str, load: float, p: ClosPlan, seed: int, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    overrides = {"topology.k": p.k, "cc.algorithm": SYSTEMS[system], "workloads.0.rate": rpc_rate(load), **(extra or {})}
    return preset(name, overrides, p.run, seed, file=FILE)


def load_points(quick: bool) -> list[Point]:
    """The load sweep Figs. 19–21 share (so it runs once)."""
    p = clos_plan(quick)
    return [
        Point({"system": s, "load": load, "seed": seed}, scenario("timely-clos", s, load, p, seed))
        for s in SYSTEMS
        for load in p.loads
        for seed in p.run.seeds
    ]


def rows(runs: list[Run]) -> pd.DataFrame:
    """One row per run: labels, the RPC generator's offered and accepted load (fractions of the
    host links), the busiest host link direction's utilization and the median one's, RPC latency (RPCs still open at the end count at their age: `rpcs_censored`),
    pinger RTT, PFC pauses."""
    out = []
    for r in runs:
        g = r.result.groups.set_index("kind")
        hosts = r.result.meta["scenario"]["topology"]["k"] ** 3 / 4
        s = r.result.summary
        p = r.result.ports
        names = p["port"].astype(str)
        host_links = p[names.str.match(r"^h\d+-") | names.str.contains(r"-h\d+$")].groupby("port", observed=True).utilization.sum()
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
            }
        )
    return pd.DataFrame(out)


def by_load(runs: list[Run], by: list[str]) -> pd.DataFrame:
    """`rows` averaged over seeds."""
    d = rows(runs).drop(columns="seed")
    return d.groupby(by, sort=False).mean().reset_index()
