"""The collectives experiments, on a k = 8 fat-tree at 100 Gbps (the quick form: k = 4):

- `collectives-allreduce`: one ring all-reduce over ranks spread across the pods, under DCQCN,
  HPCC, Swift, TIMELY and DCTCP, with ECMP and each routing mode: completion over the
  bandwidth-optimal time. Ring neighbours in other pods share core links when their flows'
  hashes collide, which per-packet path choice avoids.
- `collectives-contention`: an all-reduce and an all-to-all on interleaved hosts, each alone
  and both at once: each one's slowdown from the other (Crux, SIGCOMM'24: inter-job contention)."""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import pandas as pd

from ...plotting import styled, subplots
from ...scenario import set_key
from .. import Check, Experiment, Outcome, Point, Run, register
from ..common import ref_row
from ..multipath.common import DCQCN, DCTCP, ROUTING, SWIFT

#: Each scheme's settings, as the multipath experiments run them: TIMELY as DCQCN on the message
#: transport, HPCC with its own defaults, both over PFC.
SCHEMES: dict[str, dict[str, Any]] = {
    "DCQCN": DCQCN,
    "HPCC": {"cc": {"algorithm": "hpcc"}, "switch.pfc": True},
    "TIMELY": {**DCQCN, "cc": {"algorithm": "timely"}},
    "DCTCP": DCTCP,
    "Swift": SWIFT,
}
#: Under the modes that reorder, the message transport's schemes recover by selective repeat.
#: (k, ranks per job, buffer per rank, the longest a run may take: each ends with its jobs).
FULL, QUICK = (8, 32, "8MB", "30ms"), (4, 8, "1MB", "5ms")


def fabric(name: str, quick: bool) -> dict[str, Any]:
    k, _, _, duration = QUICK if quick else FULL
    return {
        "name": name,
        "seed": 1,
        "duration": duration,
        "until": "flows_done",
        "topology": {"kind": "fat_tree", "k": k, "link_rate": "100Gbps", "link_delay": "1us"},
        "switch": {"buffer": "32MB", "pfc": False},
        "nic": {"mtu": "1064B"},
    }


def spread(quick: bool, offset: int = 0) -> list[int]:
    """Ranks dealt over the pods in turn, each pod's in different racks (from host `offset` of
    each rack), so that consecutive ranks — ring neighbours — sit in different pods and their
    traffic crosses the core."""
    k, ranks, _, _ = QUICK if quick else FULL
    pod, rack = k * k // 4, k // 2
    return [(i % k) * pod + (i // k) * rack % pod + offset for i in range(ranks)]


def job(collective: str, hosts: list[int], quick: bool, **extra: Any) -> dict[str, Any]:
    return {"collective": collective, "hosts": hosts, "size": (QUICK if quick else FULL)[2], **extra}


def with_scheme(s: dict[str, Any], scheme: str, routing: str) -> dict[str, Any]:
    for key, value in SCHEMES[scheme].items():
        set_key(s, key, copy.deepcopy(value))
    s["routing"] = dict(ROUTING[routing])
    if routing != "ECMP" and s.get("transport", {}).get("kind", "message") == "message":
        set_key(s, "nic.recovery", "selective_repeat")
    return s


# --- collectives-allreduce -------------------------------------------------------------------


def allreduce_points(quick: bool) -> list[Point]:
    schemes = ["DCQCN", "DCTCP"] if quick else list(SCHEMES)
    routings = ["ECMP", "spraying"] if quick else list(ROUTING)
    out = []
    for scheme in schemes:
        for routing in routings:
            s = fabric(f"collectives-allreduce {scheme} {routing}", quick)
            s["jobs"] = [job("allreduce_ring", spread(quick), quick)]
            out.append(Point({"scheme": scheme, "routing": routing}, with_scheme(s, scheme, routing)))
    return out


def job_rows(runs: list[Run]) -> pd.DataFrame:
    rows = []
    for r in runs:
        for j in r.result.jobs.itertuples():
            rows.append(
                {
                    **r.labels,
                    "job": j.group,
                    "collective": j.collective,
                    "iteration": j.iteration,
                    "start_us": j.start_us,
                    "end_us": j.end_us,
                    "completion_us": j.completion_us,
                    "ideal_us": j.ideal_us,
                    "slowdown": j.slowdown,
                }
            )
    return pd.DataFrame(rows)


@styled
def allreduce_plot(d: pd.DataFrame) -> Any:
    fig, (ax,) = subplots(1, 1, width=6.0, height=2.6)
    routings = list(dict.fromkeys(d.routing))
    width = 0.8 / len(routings)
    schemes = list(dict.fromkeys(d.scheme))
    for i, routing in enumerate(routings):
        g = d[d.routing == routing].set_index("scheme").reindex(schemes)
        x = np.arange(len(schemes)) + i * width
        ax.bar(x, g.slowdown, width=width, label=routing)
        for xi, y in zip(x, g.slowdown):
            if np.isnan(y):
                ax.text(xi, 1.05, "unfinished", rotation=90, ha="center", va="bottom", fontsize=5)
    ax.set_xticks(np.arange(len(schemes)) + 0.4 - width / 2, schemes)
    ax.axhline(1.0, color="grey", linewidth=0.6, linestyle=":")
    ax.set(ylabel="completion / bandwidth-optimal", yscale="log")
    ax.legend(fontsize=7, frameon=False, ncol=len(routings))
    return fig


def allreduce_analyse(runs: list[Run], quick: bool) -> Outcome:
    d = job_rows(runs)
    v = d.set_index(["scheme", "routing"]).slowdown
    schemes = list(dict.fromkeys(d.scheme))
    per_packet = [r for r in dict.fromkeys(d.routing) if r in ("spraying", "REPS", "adaptive")]
    # A ring that did not finish in the run counts as infinitely slow; closer means by 2 %.
    slow = v.fillna(np.inf)
    better = [s for s in schemes if min(slow[(s, r)] for r in per_packet) < 0.98 * slow[(s, "ECMP")]]
    unfinished = [f"{s} with {r}" for (s, r), x in v.items() if np.isnan(x)]
    checks = [
        Check(
            "every run completes, no faster than the bandwidth-optimal time (a check of the ideal)",
            bool(d.slowdown.notna().all() and (d.slowdown >= 1.0).all()),
            f"slowdowns {d.slowdown.min():.2f} to {d.slowdown.max():.2f}"
            + (f"; not finished in the run: {', '.join(unfinished)}" if unfinished else ""),
        ),
        Check(
            "per-packet path choice (spraying, REPS or adaptive routing) brings the ring closer to its ideal than ECMP for most schemes",
            len(better) * 2 > len(schemes),
            "; ".join(
                f"{s}: ECMP {v[(s, 'ECMP')]:.2f}, " + ", ".join(f"{r} {v[(s, r)]:.2f}" for r in per_packet)
                for s in schemes
            ),
        ),
    ]
    table = pd.DataFrame([ref_row(f"{s}, {r}: completion / ideal", "", v[(s, r)], None) for s, r in v.index])
    k, ranks, size, _ = QUICK if quick else FULL
    discussion = (
        f"One ring all-reduce of {size} per rank over {ranks} ranks dealt over a k = {k} fat-tree's pods in turn (ring "
        "neighbours in different pods), links at 100 Gbps, nothing else on the fabric. The ideal is 2(N − 1)/N of the "
        "buffer at a rank's line rate, payload only; each step also waits for its input, one link delay after its "
        "arrival, and each transfer pays its headers and its first packet's latency. Each transfer is a connection of "
        "its own, as in htsim's matrices: a window controller starts each step from its initial window (Swift's is one "
        "packet), which NCCL's persistent connections would not. HPCC keeps per-hop state that assumes one path: fed "
        "the telemetry of sprayed packets it misjudges its links"
        + (f" (not finished in the run: {', '.join(unfinished)})" if unfinished else "")
        + ". Under the modes that reorder, the message transport's schemes recover by selective repeat."
    )
    return Outcome(figure=allreduce_plot(d), table=table, checks=checks, data={"allreduce": d}, discussion=discussion)


# --- collectives-contention ------------------------------------------------------------------


#: The all-to-all runs this many iterations back to back, about as long as the all-reduce's one.
A2A_ITERATIONS = 3
CONTENTION = {"all-reduce alone": (True, False), "all-to-all alone": (False, True), "both": (True, True)}


def contention_points(quick: bool) -> list[Point]:
    out = []
    for case, (ar, a2a) in CONTENTION.items():
        s = fabric(f"collectives-contention {case}", quick)
        s["jobs"] = ([job("allreduce_ring", spread(quick), quick)] if ar else []) + (
            [job("alltoall", spread(quick, 1), quick, iterations=A2A_ITERATIONS)] if a2a else []
        )
        out.append(Point({"case": case}, with_scheme(s, "DCQCN", "spraying")))
    return out


def contention_analyse(runs: list[Run], quick: bool) -> Outcome:
    d = job_rows(runs)
    # A job's time: from its first iteration's start to its last one's end.
    span = d.groupby(["case", "collective"], sort=False).agg(start=("start_us", "min"), end=("end_us", "max"))
    total = span.end - span.start
    alone = {
        "all-reduce": total[("all-reduce alone", "allreduce_ring")],
        "all-to-all": total[("all-to-all alone", "alltoall")],
    }
    both = total["both"]
    slow = {
        "all-reduce": both["allreduce_ring"] / alone["all-reduce"],
        "all-to-all": both["alltoall"] / alone["all-to-all"],
    }
    checks = [
        Check(
            "each job runs slower beside the other than alone (inter-job contention)",
            bool(min(slow.values()) > 1.0),
            ", ".join(f"{c}: {alone[c]:.0f} µs alone, ×{slow[c]:.2f} beside the other" for c in slow),
        )
    ]
    table = pd.DataFrame([ref_row(f"{c}: slowdown from the other job", "", x, None) for c, x in slow.items()])
    k, ranks, size, _ = QUICK if quick else FULL
    discussion = (
        f"DCQCN with PFC on a k = {k} fat-tree at 100 Gbps, every packet sprayed (with selective repeat): a ring "
        f"all-reduce on {ranks} ranks and an all-to-all ({A2A_ITERATIONS} iterations back to back) on {ranks} others, dealt over the pods in turn from each rack's "
        f"first and second host, {size} per rank each, started together; the same jobs alone. Their ranks share racks, "
        "so their traffic shares uplinks and the core. Spraying, because under per-flow ECMP a job's completion "
        "depends on which of its flows collide, and its connections' source ports (so its hashes) differ between a "
        "run alone and one beside another job: measured at this size, the all-reduce ran 0.94 times as long beside the "
        "all-to-all as alone."
    )

    @styled
    def plot() -> Any:
        fig, (ax,) = subplots(1, 1, width=4.0, height=2.4)
        ax.bar(list(slow), list(slow.values()), color="C0")
        ax.axhline(1.0, color="grey", linewidth=0.6, linestyle=":")
        ax.set(ylabel="completion beside the other / alone")
        return fig

    return Outcome(figure=plot(), table=table, checks=checks, data={"contention": d}, discussion=discussion)


for name, title, paper, points, analyse in [
    (
        "collectives-allreduce",
        "Ring all-reduce against its bandwidth-optimal time, per scheme and routing mode",
        "A ring all-reduce is bandwidth-optimal in principle (Patarasuk and Yuan, 2009); on a Clos fabric, per-flow ECMP's collisions slow it, which packet spraying and adaptive routing avoid (Ultra Ethernet's motivation).",
        allreduce_points,
        allreduce_analyse,
    ),
    (
        "collectives-contention",
        "Two jobs on one fabric: an all-reduce and an all-to-all, each against running alone",
        "Crux (SIGCOMM 2024): in a production cluster a third of the jobs suffered inter-job contention.",
        contention_points,
        contention_analyse,
    ),
]:
    register(Experiment(name=name, group="collectives", title=title, paper=paper, points=points, analyse=analyse))
