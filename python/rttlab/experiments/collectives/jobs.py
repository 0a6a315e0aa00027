"""The collectives experiments, on a k = 8 fat-tree at 100 Gbps (the quick form: k = 4):

- `collectives-allreduce`: one ring all-reduce over ranks spread across the pods, under DCQCN,
  HPCC, Swift, TIMELY and DCTCP, with ECMP and each routing mode: completion over the
  bandwidth-optimal time. Ring neighbours in other pods share core links when their flows'
  hashes collide, which per-packet path choice avoids.
- `collectives-contention`: an all-reduce and an all-to-all on interleaved hosts, each alone
  and both at once: each one's slowdown from the other (Crux, SIGCOMM'24: inter-job contention).
- `collectives-incast`: a mixture-of-experts all-to-all whose expert load is skewed makes its
  popular ranks the receivers of an incast: with PFC, without it, and under DCTCP, what it
  costs the all-to-all and a ring all-reduce beside it."""

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
    """Each scheme and routing mode on a fresh connection per step, and on persistent
    connections for two iterations (the second, its windows open, is the one reported)."""
    schemes = ["DCQCN", "DCTCP"] if quick else list(SCHEMES)
    routings = ["ECMP", "spraying"] if quick else list(ROUTING)
    out = []
    for connections in ("per_transfer", "persistent"):
        for scheme in schemes:
            for routing in routings:
                name = f"collectives-allreduce {scheme} {routing}" + (
                    " persistent" if connections == "persistent" else ""
                )
                s = fabric(name, quick)
                extra = {"connections": connections, "iterations": 2} if connections == "persistent" else {}
                s["jobs"] = [job("allreduce_ring", spread(quick), quick, **extra)]
                labels = {"scheme": scheme, "routing": routing, "connections": connections}
                out.append(Point(labels, with_scheme(s, scheme, routing)))
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
    fig, axes = subplots(2, 1, width=7.0, height=2.6)
    routings = list(dict.fromkeys(d.routing))
    width = 0.8 / len(routings)
    schemes = list(dict.fromkeys(d.scheme))
    for ax, (connections, title) in zip(axes, CONNECTIONS.items()):
        for i, routing in enumerate(routings):
            g = d[(d.routing == routing) & (d.connections == connections)].set_index("scheme").reindex(schemes)
            x = np.arange(len(schemes)) + i * width
            ax.bar(x, g.slowdown, width=width, label=routing)
            for xi, y in zip(x, g.slowdown):
                if np.isnan(y):
                    ax.text(xi, 1.05, "unfinished", rotation=90, ha="center", va="bottom", fontsize=5)
        ax.set_xticks(np.arange(len(schemes)) + 0.4 - width / 2, schemes, fontsize=6)
        ax.axhline(1.0, color="grey", linewidth=0.6, linestyle=":")
        ax.set(ylabel="completion / bandwidth-optimal", yscale="log", title=title)
    axes[0].legend(fontsize=6, frameon=False, ncol=len(routings))
    return fig


#: The two ways a job's transfers are carried, as the figure titles them.
CONNECTIONS = {"per_transfer": "a connection per step", "persistent": "persistent connections, 2nd iteration"}


def allreduce_analyse(runs: list[Run], quick: bool) -> Outcome:
    d = job_rows(runs)
    # Persistent connections: the second iteration, whose windows and rates carry over.
    d = d[d.iteration == d.groupby(["scheme", "routing", "connections"]).iteration.transform("max")]
    both = d.set_index(["connections", "scheme", "routing"]).slowdown
    v = both["per_transfer"]
    schemes = list(dict.fromkeys(d.scheme))
    per_packet = [r for r in dict.fromkeys(d.routing) if r in ("spraying", "REPS", "adaptive")]
    # A ring that did not finish in the run counts as infinitely slow; closer means by 2 %.
    slow = v.fillna(np.inf)
    better = [s for s in schemes if min(slow[(s, r)] for r in per_packet) < 0.98 * slow[(s, "ECMP")]]
    unfinished = [f"{s} with {r}" for (s, r), x in v.items() if np.isnan(x)]
    best_of = both.fillna(np.inf).groupby(level=["connections", "scheme"]).min()
    window_schemes = [s for s in schemes if s in ("DCTCP", "Swift")]
    fresh, kept = best_of["per_transfer"], best_of["persistent"]
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
        Check(
            "on persistent connections a window controller keeps its window from step to step: DCTCP's and Swift's ring runs at least twice as close to its ideal as on a fresh connection per step",
            all(kept[s] * 2 <= fresh[s] for s in window_schemes),
            "; ".join(
                f"{s}, best routing: {fresh[s]:.2f} per step's connection, {kept[s]:.2f} persistent"
                for s in window_schemes
            ),
        ),
    ]
    table = pd.DataFrame(
        [ref_row(f"{s}, {r}: completion / ideal", "", v[(s, r)], None) for s, r in v.index]
        + [
            ref_row(f"{s}, {r}, persistent: 2nd iteration / ideal", "", x, None)
            for (s, r), x in both["persistent"].items()
        ]
    )
    k, ranks, size, _ = QUICK if quick else FULL
    discussion = (
        f"One ring all-reduce of {size} per rank over {ranks} ranks dealt over a k = {k} fat-tree's pods in turn (ring "
        "neighbours in different pods), links at 100 Gbps, nothing else on the fabric. The ideal is 2(N − 1)/N of the "
        "buffer at a rank's line rate, payload only; each step also waits for its input, one link delay after its "
        "arrival, and each transfer pays its headers and its first packet's latency. Each transfer is a connection of "
        "its own, as in htsim's matrices: a window controller starts each step from its initial window (Swift's is one "
        'packet); on persistent connections (`jobs.connections = "persistent"`, NCCL\'s way) it keeps its window, '
        "and the second of two iterations is reported. HPCC keeps per-hop state that assumes one path: fed "
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


# --- collectives-incast ----------------------------------------------------------------------


#: How the fabric meets the incast. Without PFC the message transport recovers by selective
#: repeat; its retransmission timeout decides what a loss costs, so two are shown: IRN's
#: (Mittal et al., SIGCOMM'18: RTO_high 320 µs) and the NIC's default (InfiniBand's local ACK
#: timeout, 4.096 µs × 2^14, 67 ms).
INCAST_SCHEMES: dict[str, dict[str, Any]] = {
    "DCQCN, PFC": DCQCN,
    "DCQCN, no PFC, RTO 320 µs": {
        **DCQCN,
        "switch.pfc": False,
        "nic.recovery": "selective_repeat",
        "nic.retransmit_timeout": "320us",
    },
    "DCQCN, no PFC, RTO 67 ms": {**DCQCN, "switch.pfc": False, "nic.recovery": "selective_repeat"},
    "DCTCP": DCTCP,
}
#: The expert load's Zipf exponent (`jobs.skew`): balanced, and skewed.
SKEWS = (0.0, 1.0)
#: A shallower shared buffer than the other experiments', with the dynamic threshold (a
#: Broadcom-style MMU), so that the incast meets a switch's limits; buffer per rank of each job.
INCAST_SWITCH = {"buffer": "4MB", "alpha": 1.0}
INCAST_SIZE = "2MB"
#: Every run ends with its jobs, or at this cap (a loss waiting for a 67 ms timeout).
INCAST_CAP = "150ms"


def incast_points(quick: bool) -> list[Point]:
    out = []
    size = INCAST_SIZE
    for scheme, settings in INCAST_SCHEMES.items():
        cases = [("ring alone", None)] + [(f"skew {skew:g}", skew) for skew in SKEWS]
        for case, skew in cases:
            s = fabric(f"collectives-incast {scheme} {case}", quick)
            s["duration"] = INCAST_CAP
            s["switch"].update(INCAST_SWITCH)
            ring = job("allreduce_ring", spread(quick, 1), quick, size=size)
            s["jobs"] = [ring] if skew is None else [job("alltoall", spread(quick), quick, size=size, skew=skew), ring]
            for key, value in settings.items():
                set_key(s, key, copy.deepcopy(value))
            out.append(Point({"scheme": scheme, "case": case}, s))
    return out


def incast_analyse(runs: list[Run], quick: bool) -> Outcome:
    d = job_rows(runs)
    fabric_rows = pd.DataFrame(
        [
            {
                **r.labels,
                **{k: r.result.summary[k] for k in ("pauses", "paused_us", "drops", "timeouts", "retransmits")},
            }
            for r in runs
        ]
    )
    ring = d[d.collective == "allreduce_ring"].set_index(["scheme", "case"]).completion_us
    a2a = d[d.collective == "alltoall"].set_index(["scheme", "case"]).slowdown
    f = fabric_rows.set_index(["scheme", "case"])
    schemes = list(INCAST_SCHEMES)
    # The bystander's completion beside the all-to-all over its own alone (unfinished: infinite).
    beside = {(s, c): ring.get((s, c), np.nan) / ring[(s, "ring alone")] for s in schemes for c in ("skew 0", "skew 1")}
    beside_or_inf = {k: (np.inf if np.isnan(v) else v) for k, v in beside.items()}
    a2a_or_inf = a2a.fillna(np.inf)
    pfc, lossy, dctcp = "DCQCN, PFC", "DCQCN, no PFC, RTO 320 µs", "DCTCP"
    balanced_clean = all(f.loc[(s, "skew 0"), "pauses"] == 0 and f.loc[(s, "skew 0"), "drops"] == 0 for s in schemes)
    fmt = lambda x: "unfinished" if not np.isfinite(x) else f"{x:.2f}"  # noqa: E731
    checks = [
        Check(
            "balanced, the all-to-all neither pauses nor drops; skewed, its popular ranks are an incast: PFC pauses, and without PFC the switches drop",
            bool(balanced_clean and f.loc[(pfc, "skew 1"), "pauses"] > 0 and f.loc[(lossy, "skew 1"), "drops"] > 0),
            "balanced: "
            + ", ".join(
                f"{s} {f.loc[(s, 'skew 0'), 'pauses']} pauses {f.loc[(s, 'skew 0'), 'drops']} drops" for s in schemes
            )
            + f"; skewed: PFC {f.loc[(pfc, 'skew 1'), 'pauses']} pauses ({f.loc[(pfc, 'skew 1'), 'paused_us'] / 1000:.1f} ms paused, summed over ports), "
            f"no PFC {f.loc[(lossy, 'skew 1'), 'drops']} drops",
        ),
        Check(
            "PFC spreads the incast to a bystander: the ring all-reduce beside the skewed all-to-all slows more with PFC than without",
            bool(beside_or_inf[(pfc, "skew 1")] > beside_or_inf[(lossy, "skew 1")]),
            f"ring beside the skewed all-to-all over alone: PFC ×{fmt(beside_or_inf[(pfc, 'skew 1')])}, no PFC ×{fmt(beside_or_inf[(lossy, 'skew 1')])}",
        ),
        Check(
            "without PFC the all-to-all pays for its losses: it takes longer than with PFC, and much longer when a loss waits for the NIC's default timeout",
            bool(
                a2a_or_inf[(lossy, "skew 1")] > a2a_or_inf[(pfc, "skew 1")]
                and a2a_or_inf[("DCQCN, no PFC, RTO 67 ms", "skew 1")] > 2 * a2a_or_inf[(lossy, "skew 1")]
            ),
            ", ".join(f"{s}: ×{fmt(a2a_or_inf[(s, 'skew 1')])}" for s in schemes[:3]) + " of its ideal",
        ),
        Check(
            "DCTCP's marks hold the incast's queues below the buffer: no drops, and the bystander barely slowed",
            bool(f.loc[(dctcp, "skew 1"), "drops"] == 0 and beside_or_inf[(dctcp, "skew 1")] < 1.1),
            f"{f.loc[(dctcp, 'skew 1'), 'drops']} drops; ring ×{fmt(beside_or_inf[(dctcp, 'skew 1')])} beside it",
        ),
    ]
    table = pd.DataFrame(
        [ref_row(f"{s}, skewed: all-to-all completion / ideal", "", a2a.get((s, "skew 1")), None) for s in schemes]
        + [ref_row(f"{s}, skewed: ring beside it / alone", "", beside[(s, "skew 1")], None) for s in schemes]
    )
    k, ranks, _, _ = QUICK if quick else FULL
    discussion = (
        f"A k = {k} fat-tree at 100 Gbps with a {INCAST_SWITCH['buffer']} shared buffer per switch under a dynamic "
        f"threshold (alpha {INCAST_SWITCH['alpha']:g}); an all-to-all of {INCAST_SIZE} per rank over {ranks} ranks "
        "dealt over the pods, beside a ring all-reduce of the same size on as many other hosts of the same racks, "
        "started together; the ring alone for reference. With `skew = 1` each rank's buffer goes to the others in "
        f"Zipf shares, so rank 0 receives {ranks - 1} times {1 / sum(1 / i for i in range(1, ranks + 1)):.0%} of a buffer: "
        "a mixture-of-experts layer whose popular experts draw most tokens. What decides the numbers: the buffer and "
        "its threshold, PFC's static thresholds (100 KB off, 80 KB on), and, without PFC, the retransmission "
        "timeout — IRN's 320 µs against the NIC's 67 ms default (a run ends by its jobs or at "
        f"{INCAST_CAP}); the ring loses packets too where it shares the incast's switches, so a long timeout slows "
        "it as well. DCTCP runs the window transport with RACK over the same fabric, without PFC."
    )

    @styled
    def plot() -> Any:
        fig, (a, b) = subplots(2, 1, width=7.0, height=2.6)
        x = np.arange(len(schemes))
        for i, case in enumerate(("skew 0", "skew 1")):
            a.bar(x + i * 0.4, [a2a_or_inf.get((s, case), np.nan) for s in schemes], width=0.4, label=case)
            b.bar(x + i * 0.4, [beside[(s, case)] for s in schemes], width=0.4, label=case)
        for ax, label in ((a, "all-to-all: completion / ideal"), (b, "ring beside it / alone")):
            ax.set_xticks(x + 0.2, [s.replace(", ", "\n") for s in schemes], fontsize=6)
            ax.axhline(1.0, color="grey", linewidth=0.6, linestyle=":")
            ax.set(ylabel=label, yscale="log")
        a.legend(fontsize=7, frameon=False)
        return fig

    return Outcome(
        figure=plot(),
        table=table,
        checks=checks,
        data={"incast": d, "fabric": fabric_rows},
        discussion=discussion,
    )


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
    (
        "collectives-incast",
        "A skewed all-to-all's incast, with and without PFC, and a job beside it",
        "PFC makes RoCE lossless at the price of pauses that spread to innocent flows (Guo et al., SIGCOMM 2016; DCQCN, SIGCOMM 2015); IRN (Mittal et al., SIGCOMM 2018) argues for selective repeat without PFC. A mixture-of-experts all-to-all with uneven expert load is an incast at its popular ranks.",
        incast_points,
        incast_analyse,
    ),
]:
    register(Experiment(name=name, group="collectives", title=title, paper=paper, points=points, analyse=analyse))
