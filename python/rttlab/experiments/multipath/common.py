"""What the multipath experiments share: the fat-tree, the schemes' transport settings, and
reading link utilization from the ports table."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pandas as pd

#: The schemes' settings, as dotted keys and tables to set on a scenario (copy them: a table set
#: is shared with every scenario that set it).
#: DCTCP as the HPCC simulator marks for it (K = 30 KB at 10 Gbps, scaled with the port's rate;
#: reference algorithms.md §9.1), an ACK per packet, and RACK: spraying reorders, and three
#: duplicate ACKs would take that for loss.
DCTCP = {
    "transport": {"kind": "window", "delayed_ack": False, "loss_detection": "rack"},
    "cc": {"algorithm": "dctcp"},
    "switch.ecn": {"k": "30KB", "scale_rate": "10Gbps"},
}
#: Swift on the same window transport (it reads no marks).
SWIFT = {"transport": {"kind": "window", "delayed_ack": False, "loss_detection": "rack"}, "cc": {"algorithm": "swift"}}
#: DCQCN over PFC, on the message transport with per-packet pacing and no window of its own
#: (the HPCC simulator's `dcqcn`), with the NIC's loss recovery given.
DCQCN = {"cc": {"algorithm": "dcqcn"}, "switch.pfc": True, "nic.max_outstanding": "1TB", "nic.segment": "1000B"}


#: The routing modes the experiments compare, as `[routing]` tables.
ROUTING: dict[str, dict[str, Any]] = {
    "ECMP": {"mode": "ecmp"},
    "flowlets": {"mode": "flowlet"},
    "spraying": {"mode": "spray"},
    "REPS": {"mode": "spray", "spray": "reps"},
    "adaptive": {"mode": "adaptive"},
}


def small_flow_p99(fct: pd.DataFrame, most_bytes: int) -> float:
    """The worst p99 slowdown among the first workload's size buckets up to `most_bytes` (NaN:
    none)."""
    buckets = fct[(fct.group == "workloads[0]") & (fct.bucket != "all")]
    small = buckets[buckets.size_max_bytes.astype(float).fillna(np.inf) <= most_bytes]
    return float(small.slowdown_p99.max()) if len(small) else np.nan


def fat_tree(k: int, rate: str) -> dict[str, Any]:
    """A full-bisection k-ary fat-tree, every link `rate` and 1 µs."""
    return {"kind": "fat_tree", "k": k, "link_rate": rate, "link_delay": "1us"}


def base(name: str, k: int, rate: str, warmup_ms: float, measured_ms: float) -> dict[str, Any]:
    """The fabric every multipath experiment runs on: 32 MB shared buffers, 1000 B payloads."""
    return {
        "name": name,
        "seed": 1,
        "duration": f"{warmup_ms + measured_ms:g}ms",
        "warmup": f"{warmup_ms:g}ms",
        "topology": fat_tree(k, rate),
        "switch": {"buffer": "32MB", "pfc": False},
        "nic": {"mtu": "1064B"},
    }


def edge_uplinks(ports: pd.DataFrame, k: int) -> pd.DataFrame:
    """The ports from each edge (ToR) switch up to its pod's aggregation switches: in a
    k-ary fat-tree the edge switches are s0 to s(k²/2 − 1), the aggregation switches the next
    k²/2. Columns: edge, port, utilization (payload and headers over the run, of the line)."""
    edges = k * k // 2
    rows = []
    for port, g in ports.groupby("port", sort=False):
        m = re.fullmatch(r"s(\d+)-s(\d+)", str(port))
        if not m or not (int(m[1]) < edges <= int(m[2]) < 2 * edges):
            continue
        rows.append({"edge": int(m[1]), "port": port, "tx_bytes": float(g.tx_bytes.sum())})
    return pd.DataFrame(rows)


def imbalance(uplinks: pd.DataFrame) -> float:
    """PLB's imbalance of ToR uplinks (§5.2): per ToR, (max − min) / max of its uplinks' bytes,
    averaged over the ToRs that sent anything."""
    per_edge = uplinks.groupby("edge").tx_bytes.agg(["max", "min"])
    per_edge = per_edge[per_edge["max"] > 0]
    return float(((per_edge["max"] - per_edge["min"]) / per_edge["max"]).mean()) if len(per_edge) else np.nan
