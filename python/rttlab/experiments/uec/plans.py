"""htsim_uec's own validation plans read unchanged, and the fabric htsim builds for them.

A plan (uet-htsim `htsim/sim/datacenter/validate_*.txt`, copied with htsim's outputs and
matrices in ``htsim/`` beside this file, BSD 2-Clause) is a list of blocks: a connection
matrix's path, ``!Experiment NAME``, ``!Binary``, one ``!Param FLAG [VALUE]`` per command-line
flag of ``htsim_uec``, ``!tailFCT T`` (µs). `scenario` maps a block's flags onto an rttlab
scenario on the fabric ``htsim_uec`` builds without ``-topo`` (``main_uec.cpp``): a 3-tier
fat-tree sized from the matrix's node count, 100 Gbps and 1 µs per link, MTU 4150 B with a 64 B
header, trimming on, data queues of one BDP of the largest unloaded RTT (in whole packets), ECN
marked between 20 % and 80 % of it, NSCC with three quarters of that RTT as its target; with
receiver credits (``-receiver_cc_only``, ``-receiver_cc``) a credit window of 1.5 times that
BDP and no ECN on the ToR downlinks.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

DATA = Path(__file__).parent / "htsim"

#: ``main_uec.cpp``'s defaults.
LINK_GBPS = 100
HOP_US = 1.0
MTU = 4150
HEADER = 64
ACK = 64
#: ``-failed N``: the links run at this fraction of their speed, queue and ECN thresholds
#: (``FatTreeTopologyCfg::_failed_link_ratio``).
FAILED_RATIO = 0.25


@dataclass
class Block:
    """One experiment of a plan: its matrix (relative to the data folder), its flags with the
    plan's line for each, htsim's tail-FCT target."""

    name: str
    matrix: str
    line: int
    params: list[tuple[str, str | None, int]] = field(default_factory=list)
    tail_target_us: float | None = None


@dataclass
class HtsimRun:
    """What htsim's ``validate.py`` printed for one experiment."""

    tail_us: float
    spread_min_us: float
    spread_max_us: float
    new: int
    rtx: int
    acks: int
    nacks: int


class PlanError(ValueError):
    """A plan's line rttlab cannot run: names the file, the line and the problem."""


def read_plan(path: Path) -> list[Block]:
    """The blocks of plan ``path``."""
    blocks: list[Block] = []
    for n, raw in enumerate(path.read_text().splitlines(), start=1):
        line = raw.strip()
        if not line:
            continue
        if not line.startswith("!"):
            blocks.append(Block(name="", matrix=line, line=n))
            continue
        if not blocks:
            raise PlanError(f"{path}:{n}: {line.split()[0]} before any matrix line")
        b = blocks[-1]
        word, _, rest = line.partition(" ")
        if word == "!Experiment":
            b.name = rest.strip()
        elif word == "!Param":
            flag, _, value = rest.strip().partition(" ")
            b.params.append((flag, value.strip() or None, n))
        elif word == "!tailFCT":
            b.tail_target_us = float(rest)
        elif word not in ("!Binary", "!FCT"):
            raise PlanError(f"{path}:{n}: unknown directive {word}")
    return blocks


_TAIL = re.compile(r"Tail FCT ([\d.]+) us")
_SPREAD = re.compile(r"FCT Spread ([\d.]+) -> ([\d.]+)")
_SUMMARY = re.compile(r"New: (\d+) Rtx: (\d+) .* ACKs: (\d+) NACKs: (\d+)")


def read_outputs(path: Path) -> list[HtsimRun | None]:
    """htsim's outputs for a plan's experiments, in the plan's order (``None``: it printed no
    tail FCT)."""
    runs: list[HtsimRun | None] = []
    for chunk in path.read_text().split("Experiment: ")[1:]:
        tail, spread, summary = _TAIL.search(chunk), _SPREAD.search(chunk), _SUMMARY.search(chunk)
        if not (tail and spread and summary):
            runs.append(None)
            continue
        runs.append(
            HtsimRun(
                float(tail[1]),
                float(spread[1]),
                float(spread[2]),
                *(int(summary[k]) for k in range(1, 5)),
            )
        )
    return runs


def matrix_nodes(matrix: Path) -> int:
    for line in matrix.read_text().splitlines():
        if line.startswith("Nodes"):
            return int(line.split()[1])
    raise PlanError(f"{matrix}: no `Nodes N` line")


def fat_tree_k(nodes: int) -> int:
    """htsim's 3-tier fat-tree for ``nodes`` hosts: k³/4 of them."""
    k = round((4 * nodes) ** (1 / 3))
    if k**3 // 4 != nodes:
        raise PlanError(f"{nodes} nodes: not the hosts of a 3-tier fat-tree (k³/4)")
    return k


@dataclass(frozen=True)
class Diameter:
    """The longest path of htsim's fabric: its links and their latency summed
    (``get_diameter``, ``get_diameter_latency``)."""

    links: int
    latency_us: float


#: The 3-tier fat-tree htsim builds without ``-topo``: six 1 µs links.
FAT_TREE = Diameter(6, 6 * HOP_US)


def topology_shape(path: Path) -> tuple[Diameter, int]:
    """What ``main_uec.cpp`` reads of htsim topology file ``path`` (rttlab builds its fabric,
    `topology.file`): the diameter, two links per tier and each tier's down link latency twice
    (its switch latencies are 0 in every file htsim ships, and rttlab reads no other), and the
    oversubscription, the product of the tiers' ``Oversubscribed`` (``get_oversubscription_ratio``)."""
    tiers, latency_ns, tier, ratio = 0, {}, None, 1
    for line in path.read_text().splitlines():
        words = line.split()
        if len(words) < 2 or words[0].startswith("#"):
            continue
        key = words[0].lower()
        if key == "tiers":
            tiers = int(words[1])
        elif key == "tier":
            tier = int(words[1])
        elif key == "downlink_latency_ns":
            latency_ns[tier] = int(words[1])
        elif key == "oversubscribed":
            ratio *= int(words[1])
    return Diameter(2 * tiers, 2 * sum(latency_ns[t] for t in range(tiers)) / 1e3), ratio


def unloaded_rtt_us(d: Diameter = FAT_TREE) -> float:
    """``calculate_rtt``: the fabric's diameter both ways, a data packet's and an ACK's
    serialization on each of its links."""
    per_link_ns = (MTU + ACK) * 8 / LINK_GBPS
    return 2 * d.latency_us + d.links * per_link_ns / 1e3


def credit_window(d: Diameter = FAT_TREE) -> int:
    """``UecSrc::initRccc``: 1.5 BDP at the unloaded RTT, in bytes (truncated twice, as htsim's
    ``mem_b``)."""
    rtt_ps = round(unloaded_rtt_us(d) * 1e6)  # htsim's time: integer picoseconds
    return int(1.5 * int(rtt_ps / 1e12 * (LINK_GBPS * 1e9 / 8)))


def bdp_packets(d: Diameter = FAT_TREE) -> int:
    """``calculate_bdp_pkt``: the unloaded RTT's BDP in whole MTU packets, rounded up."""
    return math.ceil(unloaded_rtt_us(d) * 1e-6 * LINK_GBPS * 1e9 / 8 / MTU)


def failed_ports(k: int, n: int) -> list[str]:
    """``-failed N``: the core-to-aggregation direction (the queue htsim slows) of the first N
    aggregation uplinks, uplink l of aggregation switch a being number l + a·k/2
    (``FatTreeTopology``'s construction), as rttlab names them: the edge switches are s0 to
    s(k²/2 − 1), the aggregation switches the next k²/2, then the cores, and uplink l of
    aggregation switch a goes to core (a mod k/2)·k/2 + l (htsim's wiring, renumbered)."""
    half, edges = k // 2, k * k // 2
    ports = []
    for i in range(n):
        agg, up = divmod(i, half)
        ports.append(f"s{2 * edges + (agg % half) * half + up}-s{edges + agg}")
    return ports


def scenario(plan: str, block: Block, data: Path = DATA) -> dict[str, Any]:
    """The rttlab scenario of ``block`` of plan file ``plan``; a flag it cannot map is a
    `PlanError` naming the flag and the plan's line."""
    matrix = data / block.matrix
    topo = next((value for flag, value, _ in block.params if flag == "-topo" and value), None)
    diameter, ratio = topology_shape(data / topo) if topo else (FAT_TREE, 1)
    if topo:
        topology = {"kind": "graph", "file": str(data / topo)}
    else:
        k = fat_tree_k(matrix_nodes(matrix))
        topology = {"kind": "fat_tree", "k": k, "link_rate": f"{LINK_GBPS}Gbps", "link_delay": f"{HOP_US:g}us"}
    bdp = bdp_packets(diameter)
    queue_packets = bdp
    rtt = unloaded_rtt_us(diameter)
    routing: dict[str, Any] = {"mode": "spray", "spray": "mixed", "entropies": 64}
    transport: dict[str, Any] = {"kind": "uet"}
    cc: dict[str, Any] = {"algorithm": "nscc", "target_delay": f"{rtt * 0.75 * 1e3:.3f}ns"}
    end_us, failed = 0.0, 0
    # ``main_uec.cpp``'s `sender_driven`, `receiver_driven`: the flags set them in order.
    sender, receiver = True, False
    spray = {"oblivious": "oblivious", "bitmap": "bitmap", "mixed": "mixed", "reps": "reps_freezing"}
    for flag, value, line in block.params:

        def need(what: str, flag: str = flag, value: str | None = value, line: int = line) -> str:
            if value is None:
                raise PlanError(f"{plan}:{line}: {flag} needs {what}")
            return value

        if flag == "-end":
            end_us = float(need("a time in µs"))
        elif flag == "-sender_cc_only":
            sender, receiver = True, False
        elif flag == "-receiver_cc_only":
            sender, receiver = False, True
        elif flag == "-sender_cc":
            sender = True
        elif flag == "-receiver_cc":
            receiver = True
        elif flag == "-paths":
            routing["entropies"] = int(need("a number of entropy values"))
        elif flag == "-cwnd":
            cc["initial_cwnd"] = int(need("packets")) * MTU
        elif flag == "-q":
            queue_packets = int(need("packets"))
        elif flag == "-sack_threshold":
            transport["sack_threshold"] = f"{int(need('bytes'))}B"
        elif flag == "-load_balancing_algo":
            algo = need("oblivious, bitmap, mixed or reps")
            if algo not in spray:
                raise PlanError(f"{plan}:{line}: -load_balancing_algo {algo}: rttlab runs {', '.join(spray)}")
            routing["spray"] = spray[algo]
        elif flag == "-failed":
            failed = int(need("a number of links"))
            if topo:
                raise PlanError(f"{plan}:{line}: -failed with -topo: rttlab fails links of its own fat-tree only")
        elif flag == "-topo":
            need("a topology file")
        elif flag == "-conn_reuse":
            # The matrix's `msg` lines are messages on one connection, read with or without it.
            pass
        else:
            raise PlanError(
                f"{plan}:{line}: {flag}: not a flag rttlab maps yet (it maps -end, -sender_cc_only, "
                "-receiver_cc_only, -sender_cc, -receiver_cc, -paths, -cwnd, -q, -sack_threshold, "
                "-load_balancing_algo, -failed, -topo, -conn_reuse)"
            )
    if receiver:
        transport["congestion"] = "both" if sender else "rccc"
        transport["credit_window"] = f"{credit_window(diameter)}B"
        if ratio > 1 and not sender:
            # htsim runs its oversubscription controller whenever it can (`main_uec.cpp`).
            transport["oversubscription"] = ratio
    queue = queue_packets * MTU
    low, high = math.ceil(bdp * 0.2) * MTU, math.ceil(bdp * 0.8) * MTU
    s: dict[str, Any] = {
        "name": f"uec {block.name}",
        "seed": 1,
        # Up to -end, as htsim runs: a transfer's FCT is htsim's "finished at", its sender's
        # last byte acknowledged, which comes after the run would end at the last delivery.
        "duration": f"{end_us:g}us",
        "topology": topology,
        "switch": {
            "pfc": False,
            # As much as every port's queue: the shared buffer never binds (htsim has none).
            "buffer": f"{queue * (64 if topo else 4 * k)}B",
            "trimming": "either",
            "queue_limit": f"{queue}B",
            "ecn": {"kmin": f"{low}B", "kmax": f"{high}B", "pmax": 1.0},
        },
        "nic": {"mtu": f"{MTU}B", "header": f"{HEADER}B", "ack": f"{ACK}B"},
        "transport": transport,
        "cc": cc,
        "routing": routing,
        "workloads": [{"kind": "matrix", "file": str(matrix)}],
    }
    if receiver:
        # ``set_ecn_parameters(true, !receiver_driven, ...)``: the ToR downlinks mark nothing.
        s["switch"]["ports"] = [{"ports": ["s*-h*"], "ecn": False}]
    if failed:
        ports = failed_ports(k, failed)
        s["faults"] = [{"at": "0s", "port": p, "kind": "degrade", "fraction": FAILED_RATIO} for p in ports]
        s["switch"].setdefault("ports", []).append(
            {
                "ports": ports,
                "queue_limit": f"{int(queue * FAILED_RATIO)}B",
                "ecn": {"kmin": f"{int(low * FAILED_RATIO)}B", "kmax": f"{int(high * FAILED_RATIO)}B", "pmax": 1.0},
            }
        )
    return s
