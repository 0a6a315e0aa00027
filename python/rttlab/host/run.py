"""`rttlab.host.run`: a scenario on the testbed, as real TCP through the kernel, its result in
the simulator's `Result` form.

A run builds the testbed (`testbed`), registers the controller (`bpf/`, through the loader),
attaches the ECN marker to the switch's ports towards receivers, starts one receiving and
one sending process per host (`endpoint.py`), samples the switch's queues from their qdiscs
while the flows run, and then fills the summary and tables from what the receivers counted,
what each socket's ``TCP_INFO`` says, and the decisions the controller logged.
"""

from __future__ import annotations

import json
import os
import platform
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .. import __version__
from ..result import TABLES, Result
from ..scenario import ScenarioLike, apply_overrides, load, resolve
from . import build, logs
from .params import LINUX, READINGS, Program, bps, program, ps, size
from .testbed import SWITCH, Link, Testbed, address, host_ns
from .testbed import run as sh

ENDPOINT = Path(__file__).with_name("endpoint.py")
PORT = 5001
#: A frame's Ethernet header, and its IP and TCP headers with timestamps: `nic.mtu` is the frame
#: (as the simulator counts it on the wire), the links' MTU is it less the Ethernet header, and a
#: packet's payload is that less IP and TCP.
ETHERNET = 14
TCP_OVERHEAD = 52
#: The fastest link the testbed's few cores are known to carry (docs/host.md: at 1 Gbps Swift gets
#: 0.95 of it, DCTCP 0.91); faster ones get a warning.
FAST_LINK_BPS = 10**9

#: The core every sender and receiver runs on. A veth takes a packet up on the core that sent
#: it; senders free to move between cores have their packets taken up by two cores at once,
#: out of order (measured, two DCTCP flows into 1 Gbps: 4000 SACK reorderings and 900
#: spurious retransmissions, each undone by a DSACK, in a second; on one core: under 10).
ENDPOINT_CPU = 0
#: Seconds the processes get to start before the flows do.
LEAD = 0.5


def expand_hosts(field: str, value: Any, hosts: int) -> list[int]:
    """A host set of the star: a number, ``"a-b"``, ``"a,b,c"`` (each a number or a range), or
    a list of numbers."""
    parts = value if isinstance(value, list) else str(value).split(",")
    out: list[int] = []
    for part in parts:
        text = str(part).strip()
        lo, _, hi = text.partition("-")
        if not lo.isdigit() or (hi and not hi.isdigit()):
            raise ValueError(f'{field} = {value!r}: the testbed takes host numbers, "a-b" ranges, or lists of them')
        out.extend(range(int(lo), int(hi or lo) + 1))
    if bad := [h for h in out if h >= hosts]:
        raise ValueError(f"{field} = {value!r}: host {bad[0]} is not among the star's {hosts} hosts")
    return out


def _linux_cc(s: dict[str, Any]) -> str | None:
    cc = s.get("cc")
    if isinstance(cc, dict) and cc.get("algorithm") == "linux":
        name = cc.get("name")
        if name not in LINUX:
            raise ValueError(f'cc.name = {name!r}: one of {", ".join(LINUX)} with cc.algorithm = "linux"')
        return name
    return None


#: The most link delay a scenario may ask of the testbed, whose links add none of their own.
MAX_LINK_DELAY_PS = 5 * 10**6

#: Keys the testbed cannot honour when a scenario sets them, and why.
UNSUPPORTED = {
    "switch.pfc": "the testbed has no PFC",
    "switch.ecn.kmin": "the testbed's marker marks on one threshold (switch.ecn.k)",
    "switch.ecn.kmax": "the testbed's marker marks on one threshold (switch.ecn.k)",
    "switch.int": "the kernel has no in-band telemetry",
    "measure.pcap": "the testbed does not capture packets",
    "host.rx_packet_time": "the hosts are the kernel's own",
    "host.rx_copy_rate": "the hosts are the kernel's own",
    "workloads": "the testbed runs [[flows]] only",
    "nic.pacing_rate": "the kernel paces by the controller's rate",
    "nic.rtt_noise": "the kernel's RTT samples carry the host's own noise",
    "nic.timestamps": "the kernel takes its RTT samples in software, as it does",
    "nic.host_load": "the host's load is whatever this machine runs",
}


def _explicit(s: Mapping[str, Any], key: str) -> Any:
    node: Any = s
    for part in key.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return None
        node = node[part]
    return node


def check(raw: Mapping[str, Any], s: dict[str, Any]) -> None:
    """Raises ``ValueError`` naming the first key the testbed cannot honour."""
    for key, why in UNSUPPORTED.items():
        v = _explicit(raw, key)
        if v not in (None, False, [], {}, "0ps", "0us", 0):
            raise ValueError(f"{key} = {v!r}: {why}")
    topo = s["topology"]
    delays = [topo["link_delay"], *(hl.get("delay") for hl in topo.get("host_links") or [])]
    if any(d and ps(d) > MAX_LINK_DELAY_PS for d in delays):
        raise ValueError(
            f"topology.link_delay = {topo['link_delay']!r}: the testbed cannot add delay (no netem here); its links have the kernel's own, a few microseconds (at most {MAX_LINK_DELAY_PS // 10**6}us may be asked; the measured base RTT is in meta host.base_rtt_us)"
        )
    if topo["kind"] != "star":
        raise ValueError(f"topology.kind = {topo['kind']!r}: the testbed builds a star (one switch)")
    if not s.get("flows"):
        raise ValueError("flows: the testbed runs [[flows]] and the scenario has none")
    if s.get("until", "duration") != "duration":
        raise ValueError(f'until = {s["until"]!r}: the testbed runs for the scenario\'s duration (until = "duration")')
    if _explicit(raw, "switch.ecn.mark_at") == "dequeue":
        raise ValueError(
            "switch.ecn.mark_at = 'dequeue': the testbed's marker sees packets as they join the queue (\"enqueue\")"
        )


def run(
    scenario: ScenarioLike, overrides: Mapping[str, Any] | None = None, *, tso: bool = True, decisions: bool = False
) -> Result:
    """Runs ``scenario`` on the testbed and returns its `Result`: the same summary keys and
    tables as the simulator's, filled with what the kernel measured (keys it cannot measure are
    None, tables it has nothing for are empty). ``tso``: the hosts' NICs segment TCP's bursts
    (TIMELY's segments are these bursts). Off, every packet takes the whole path on its own,
    and the senders' core, which also carries that path, keeps too little time to fill their
    windows (docs/host.md). Needs root, the kernel's BTF and the tools
    (`build.missing` says which); raises ``ValueError`` naming a scenario key the testbed cannot
    honour. ``decisions``: keep every record the controller logged, as the table ``decisions``
    (for `rttlab.host.replay`)."""
    raw = apply_overrides(load(scenario), overrides)
    linux = _linux_cc(raw)
    as_sim = dict(raw, cc={"algorithm": "reno"}) if linux else raw
    s = resolve(as_sim)
    if linux:
        s["cc"] = {"algorithm": "linux", "name": linux}
    check(raw, s)
    hosts = s["topology"]["hosts"]
    rates = [bps(s["topology"]["link_rate"])] * hosts
    for hl in s["topology"].get("host_links") or []:
        if hl.get("rate"):
            rates[hl["host"]] = bps(hl["rate"])
    frame = size(s["nic"]["mtu"])
    mss = frame - ETHERNET - TCP_OVERHEAD
    flows = _flows(s, hosts)
    senders = sorted({f["src"] for f in flows})
    for h in senders:
        if len(dst := {f["dst"] for f in flows if f["src"] == h}) > 1:
            raise ValueError(f"flows: host {h} sends to {sorted(dst)}; the testbed's senders send to one host each")
    prog = program(s, min(rates[h] for h in senders), mss)
    built = build.build()
    buffer = size(s["switch"]["buffer"])
    links = [Link(r, buffer, frame - ETHERNET) for r in rates]
    duration, warmup = ps(s["duration"]) / 1e12, ps(s["warmup"]) / 1e12
    with tempfile.TemporaryDirectory(prefix="rttlab-host-") as tmp, Testbed(links, tso=tso) as bed:
        work = Path(tmp)
        procs: list[subprocess.Popen] = []
        try:
            # Linux's own controllers log nothing: an observer logs their RTT and window.
            if prog.obj:
                cc_loader = _start_loader(built, prog.obj, prog.kernel_name, prog.params, work / "cc.bin", procs)
            else:
                cc_loader = _start_loader(built, "observer", "trace", {"port": PORT}, work / "cc.bin", procs)
            receivers = sorted({f["dst"] for f in flows})
            ecn = s["switch"].get("ecn")
            markers = {
                h: _start_marker(built, bed, h, rates[h], buffer, ecn, work / f"marker{h}.bin", procs)
                for h in receivers
            }
            if not s["transport"].get("delayed_ack", True):
                for h in receivers:
                    _quickack(h)
            start = time.monotonic() + LEAD
            end = start + duration
            endpoints = []
            for h in receivers:
                endpoints.append(
                    _spawn(
                        procs, host_ns(h), "receive", PORT, prog.kernel_name, start, warmup, end, work / f"rx{h}.json"
                    )
                )
            for h in senders:
                specs = [
                    {"flow": f["flow"], "size": f["size"], "start": start + f["start"], "stop": start + f["stop"]}
                    for f in flows
                    if f["src"] == h
                ]
                dst = next(f["dst"] for f in flows if f["src"] == h)
                endpoints.append(
                    _spawn(
                        procs,
                        host_ns(h),
                        "send",
                        address(dst),
                        PORT,
                        prog.kernel_name,
                        end,
                        work / f"tx{h}.json",
                        json.dumps(specs),
                    )
                )
            queues = _sample_queues(bed, receivers, start, end, s)
            for p in endpoints:
                _, err = p.communicate(timeout=max(end - time.monotonic(), 0) + 10)
                if p.returncode:
                    raise build.HostError(
                        f"a testbed endpoint failed ({p.args[3]}, {p.args[9]}): {err.strip()[-2000:]}"
                    )
            counters = {h: _stop(p) for h, p in markers.items()}
            cc_counters = _stop(cc_loader)
            result = _result(
                s,
                prog,
                mss,
                min(rates[h] for h in receivers),
                tso,
                flows,
                work,
                queues,
                counters,
                cc_counters,
                bed,
                start,
            )
            result.meta["host"]["tcp_counters"] = _tcp_counters(senders)
            if max(rates) > FAST_LINK_BPS:
                result.meta["warnings"].append(
                    f"links above {FAST_LINK_BPS / 1e9:g} Gbps: on this machine's {os.cpu_count()} cores the kernel's own path, not the switch, may be the bottleneck (docs/host.md)"
                )
            if decisions:
                result.tables["decisions"] = pd.DataFrame(logs.read(work / "cc.bin"))
            return result
        finally:
            for p in procs:
                if p.poll() is None:
                    p.send_signal(signal.SIGINT)
            # Two seconds for them all, not each: a Ctrl-C ends the run within a second or two.
            deadline = time.monotonic() + 2
            for p in procs:
                try:
                    p.wait(timeout=max(deadline - time.monotonic(), 0))
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()


def _flows(s: dict[str, Any], hosts: int) -> list[dict[str, Any]]:
    """The `[[flows]]` connections one by one: number, group, endpoints, start and stop (s from
    the run's start), size (0: until the end)."""
    out = []
    end = ps(s["duration"]) / 1e12
    for gi, g in enumerate(s["flows"]):
        # What shapes an application's writes, or a start drawn at random, the endpoints do not do.
        for key in ("rate", "on", "message", "write", "send_buffer"):
            if g.get(key) is not None:
                raise ValueError(
                    f"flows[{gi}].{key} = {g[key]!r}: the testbed's flows are backlogged or sized (size, start, start_step, stop, connections)"
                )
        if ps(g["start_jitter"]):
            raise ValueError(
                f"flows[{gi}].start_jitter = {g['start_jitter']!r}: the testbed starts each connection at its start (start, start_step)"
            )
        if g["class"] != 1:
            raise ValueError(
                f"flows[{gi}].class = {g['class']!r}: the testbed's switch has one queue per port (class 1)"
            )
        srcs = expand_hosts(f"flows[{gi}].src", g["src"], hosts)
        dsts = expand_hosts(f"flows[{gi}].dst", g["dst"], hosts)
        for i, h in enumerate(srcs):
            start = (ps(g["start"]) + ps(g["start_step"]) * i) / 1e12
            for _ in range(g["connections"]):
                out.append(
                    {
                        "flow": len(out),
                        "group": gi,
                        "src": h,
                        "dst": dsts[min(i, len(dsts) - 1)],
                        "start": start,
                        "stop": ps(g["stop"]) / 1e12 if g.get("stop") else end,
                        "size": size(g["size"]) if g.get("size") else 0,
                    }
                )
    return out


def _spawn(procs: list, ns: str, *args: Any) -> subprocess.Popen:
    p = subprocess.Popen(
        ["ip", "netns", "exec", ns, "taskset", "-c", str(ENDPOINT_CPU), sys.executable, str(ENDPOINT), *map(str, args)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    procs.append(p)
    _ready(p, f"the endpoint in {ns}")
    return p


def _ready(p: subprocess.Popen, what: str) -> None:
    line = p.stdout.readline() if p.stdout else ""
    if line.strip() != "ready":
        p.wait(timeout=5)
        raise build.HostError(f"{what} did not start: {(p.stderr.read() if p.stderr else '').strip() or line}")


def _start_loader(
    built: build.Built, obj: str, target: str, params: dict[str, int], out: Path, procs: list, ns: str | None = None
) -> subprocess.Popen:
    """The loader with object ``obj`` attached to ``target`` (bpf/loader.c), in namespace ``ns``."""
    cmd = [str(built.loader), str(built.obj(obj)), target, str(out), *(f"{k}={v}" for k, v in params.items())]
    if ns:
        cmd = ["ip", "netns", "exec", ns, *cmd]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    procs.append(p)
    _ready(p, f"the BPF loader ({obj}, {target})")
    return p


def _start_marker(
    built: build.Built, bed: Testbed, h: int, rate: int, buffer: int, ecn: dict | None, out: Path, procs: list
) -> subprocess.Popen:
    k = size(ecn["k"]) if ecn and ecn.get("k") else (1 << 62)
    return _start_loader(
        built,
        "marker",
        f"tc:{bed.port(h)}",
        {"rate_bps": rate, "limit_bytes": buffer, "k_bytes": k},
        out,
        procs,
        ns=SWITCH,
    )


def _quickack(h: int) -> None:
    """Delayed ACKs off at the receiver (the route's quickack), as `transport.delayed_ack = false`."""
    sh("ip", "route", "change", "10.77.0.0/16", "dev", "eth0", "quickack", "1", ns=host_ns(h))


def _stop(p: subprocess.Popen) -> dict[str, int]:
    """Stops a loader; its counters."""
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=10)
    if p.returncode:
        raise build.HostError(f"the BPF loader failed: {err.strip()}")
    return {
        k: int(v) for k, v in (line.split() for line in out.splitlines() if line.strip() and line.strip() != "ready")
    }


def _sample_queues(bed: Testbed, ports: list[int], start: float, end: float, s: dict) -> list[tuple[float, int, int]]:
    """(time from start in s, host, bytes) of each switch port towards a receiver, read from its
    qdisc every millisecond (or `measure.queue_interval`, if longer) until the end."""
    interval = max(ps(s["measure"]["queue_interval"]) / 1e12, 1e-3)
    tc = subprocess.Popen(
        ["ip", "netns", "exec", SWITCH, "tc", "-s", "-j", "-batch", "-"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        bufsize=1,
    )
    samples = []
    try:
        t = start
        while t < end:
            delay = t - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            for h in ports:
                tc.stdin.write(f"qdisc show dev {bed.port(h)}\n")
                tc.stdin.flush()
                line = tc.stdout.readline()
                samples.append((time.monotonic() - start, h, sum(q.get("backlog", 0) for q in json.loads(line))))
            t += interval
    finally:
        tc.stdin.close()
        tc.wait(timeout=5)
    return samples


def _read_json(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text()) if path.exists() else {}


def _percentiles(x: np.ndarray, qs: tuple[float, ...]) -> list[float | None]:
    return [float(np.percentile(x, q)) if len(x) else None for q in qs]


def _spread(rtt_us: np.ndarray, seen_bytes: np.ndarray, rate_bps: int) -> float | None:
    """How much wider the RTT samples spread (p90 − p10) than the queue packets found (its
    p90 − p10, as time at the bottleneck's rate), in µs: the noise of the kernel's own path."""
    if not len(rtt_us) or not len(seen_bytes):
        return None
    rtt = np.percentile(rtt_us, 90) - np.percentile(rtt_us, 10)
    queue = (np.percentile(seen_bytes, 90) - np.percentile(seen_bytes, 10)) * 8 / rate_bps * 1e6
    return float(max(0.0, rtt - queue))


def _result(
    s: dict,
    prog: Program,
    mss: int,
    bottleneck_bps: int,
    tso: bool,
    flows: list[dict],
    work: Path,
    queues: list,
    markers: dict[int, dict],
    cc_counters: dict,
    bed: Testbed,
    start: float,
) -> Result:
    duration, warmup = ps(s["duration"]) / 1e12, ps(s["warmup"]) / 1e12
    measured = duration - warmup
    rx: dict[int, dict] = {}
    tx: dict[int, dict] = {}
    for f in flows:
        rx.setdefault(f["dst"], _read_json(work / f"rx{f['dst']}.json"))
        tx.setdefault(f["src"], _read_json(work / f"tx{f['src']}.json"))
    events = logs.read(work / "cc.bin")
    # The senders' decisions (every record but a connection's start) and the RTT samples among
    # them, by the sender's local port (a receiver's sockets, local port PORT, log too).
    events = before_init_dropped(events[events["port"] >> 16 == PORT])
    decisions = events[events["kind"] != logs.EV_INIT]
    t0_ns = start * 1e9  # bpf_ktime_get_ns and time.monotonic are both CLOCK_MONOTONIC
    t_us = (decisions["t_ns"].astype(np.float64) - t0_ns) / 1e3
    # The RTT distribution is the controller's input: TIMELY's completions (as the simulator's
    # message transport counts them), every ACK's sample for the window controllers.
    inputs = decisions["kind"] != logs.EV_RTT if prog.transport == "message" else decisions["rtt_us"] > 0
    samples = decisions[inputs & (decisions["rtt_us"] > 0) & (t_us >= warmup * 1e6)]
    measured_rtt = samples["rtt_us"].astype(np.float64)
    rows = []
    for f in flows:
        r = rx[f["dst"]].get(str(f["flow"]), {})
        t = tx[f["src"]].get(str(f["flow"]), {})
        if t.get("port") is None or not r:
            why = t.get("error") or ("the receiver never heard of it" if t else "its sender has no record of it")
            raise build.HostError(f"flow {f['flow']} (host {f['src']} to {f['dst']}) did not run on the testbed: {why}")
        port = t["port"]
        mine = decisions[decisions["port"] & 0xFFFF == port]
        mine_rtt = samples["rtt_us"][samples["port"] & 0xFFFF == port]
        last = mine[-1] if len(mine) else None
        got = (r.get("at_end") or 0) - (r.get("at_warmup") or 0)
        finish = (r["finish"] - start) * 1e6 if r.get("finish") else None
        rows.append(
            {
                "flow": f["flow"],
                "group": f["group"],
                "src": f["src"],
                "dst": f["dst"],
                "class": 1,
                "start_us": f["start"] * 1e6,
                "stop_us": f["stop"] * 1e6,
                "bytes_sent": t.get("bytes_sent"),
                "bytes_delivered": r.get("bytes"),
                "goodput_gbps": got * 8 / (r.get("measured_s") or measured) / 1e9,
                "rtt_samples": len(mine_rtt),
                "rtt_avg_us": float(mine_rtt.mean()) if len(mine_rtt) else None,
                "finish_us": finish,
                "retransmits": t.get("total_retrans"),
                "ecn_echoed_bytes": t["delivered_ce"] * mss if "delivered_ce" in t else None,
                "min_rtt_us": t.get("min_rtt_us"),
                "cwnd_bytes": None,
                **{col: _reading(prog, last, col) for col in ("cc_rate_gbps", "dctcp_alpha", "fcwnd_pkts")},
                "port": port,
                "error": t.get("error"),
            }
        )
    flows_df = pd.DataFrame(rows)
    good = flows_df["goodput_gbps"].to_numpy(dtype=float)
    jain = float(good.sum() ** 2 / (len(good) * (good**2).sum())) if len(good) and (good**2).sum() > 0 else None
    q = pd.DataFrame(queues, columns=["time_s", "port", "bytes"])
    q_measured = q[q["time_s"] >= warmup]
    queue_df = pd.DataFrame(
        {"time_us": q["time_s"] * 1e6, "port": q["port"].map(lambda h: f"sw.{bed.port(h)}"), "bytes": q["bytes"]}
    )
    qstats = [
        {
            "port": f"sw.{bed.port(h)}",
            "samples": len(g),
            "avg_kb": g["bytes"].mean() / 1e3,
            "p50_kb": g["bytes"].quantile(0.5) / 1e3,
            "p99_kb": g["bytes"].quantile(0.99) / 1e3,
            "max_kb": g["bytes"].max() / 1e3,
        }
        for h, g in q_measured.groupby("port")
    ]
    qs = q_measured["bytes"].to_numpy(dtype=float)
    # The queue as each packet found it (the marker's copy of the port's queue, at its arrival):
    # packets come in bursts, so they find more than the time average the qdisc shows.
    seen = np.concatenate([logs.read(work / f"marker{h}.bin") for h in markers] or [np.zeros(0, logs.EVENT)])
    seen = seen[(seen["t_ns"].astype(np.float64) - t0_ns) >= warmup * 1e9]["value"].astype(np.float64)
    marks = sum(m.get("marks", 0) for m in markers.values())
    packets = sum(m.get("packets", 0) for m in markers.values())
    drops = _qdisc_drops(bed, sorted(markers))
    values, counts = np.unique(measured_rtt, return_counts=True)
    rtt_df = pd.DataFrame({"rtt_us": values, "count": counts, "cdf": np.cumsum(counts) / max(counts.sum(), 1)})
    p = _percentiles(measured_rtt, (0, 50, 90, 99, 99.9, 100))
    summary = {
        "measured_s": measured,
        "throughput_gbps": float(good.sum()),
        "goodput_gbps": float(good.sum()),
        "rtt_samples": len(measured_rtt),
        "rtt_avg_us": float(measured_rtt.mean()) if len(measured_rtt) else None,
        "rtt_min_us": p[0],
        "rtt_p50_us": p[1],
        "rtt_p90_us": p[2],
        "rtt_p99_us": p[3],
        "rtt_p999_us": p[4],
        "rtt_max_us": p[5],
        "jain": jain,
        "pauses": 0,
        "paused_us": 0.0,
        "drops": drops,
        "ecn_marks": marks,
        "marking_fraction": marks / packets if packets else None,
        "retransmits": int(flows_df["retransmits"].fillna(0).sum()),
        "bytes_sent": int(flows_df["bytes_sent"].fillna(0).sum()),
        "bytes_delivered": int(flows_df["bytes_delivered"].fillna(0).sum()),
        "flows": len(flows),
        "flows_finished": int(flows_df["finish_us"].notna().sum()),
        "queue_avg_kb": float(qs.mean() / 1e3) if len(qs) else None,
        "queue_p50_kb": float(np.percentile(qs, 50) / 1e3) if len(qs) else None,
        "queue_p99_kb": float(np.percentile(qs, 99) / 1e3) if len(qs) else None,
        "queue_max_kb": float(qs.max() / 1e3) if len(qs) else None,
        "queue_seen_p50_kb": float(np.percentile(seen, 50) / 1e3) if len(seen) else None,
        "queue_seen_p99_kb": float(np.percentile(seen, 99) / 1e3) if len(seen) else None,
    }
    ts = _timeseries(decisions, t_us, flows_df, prog, s)
    base = flows_df["min_rtt_us"].dropna()
    meta = {
        "rttlab_version": __version__,
        "seed": s.get("seed"),
        "scenario": s,
        "host": {
            "kernel": platform.release(),
            "controller": prog.kernel_name,
            "program": prog.obj,
            "params": prog.params,
            "tso": tso,
            "mss_bytes": mss,
            "base_rtt_us": {"min": float(base.min()), "median": float(base.median())} if len(base) else None,
            "rtt_spread_us": _spread(measured_rtt, seen, bottleneck_bps),
            "marker_packets": packets,
            "lost_records": cc_counters.get("lost_events", 0) + sum(m.get("lost_events", 0) for m in markers.values()),
            "stale_removed": bed.stale,
        },
        "warnings": [f"flow {r['flow']}: {r['error']}" for r in rows if r.get("error")]
        + ([f"removed what an earlier run had left: {', '.join(bed.stale)}"] if bed.stale else []),
    }
    tables = {name: pd.DataFrame() for name in TABLES}
    tables.update(flows=flows_df, rtt=rtt_df, queues=queue_df, queue_stats=pd.DataFrame(qstats), timeseries=ts)
    return Result(summary=summary, meta=meta, tables=tables)


def _tcp_counters(hosts: list[int]) -> dict[str, int]:
    """The senders' TCP counters (`nstat`: Tcp* and TcpExt*), summed, those not zero."""
    total: dict[str, int] = {}
    for h in hosts:
        for line in sh("nstat", "-az", ns=host_ns(h)).stdout.splitlines():
            parts = line.split()
            if len(parts) >= 2 and parts[0].startswith("Tcp") and parts[1].isdigit() and int(parts[1]):
                total[parts[0]] = total.get(parts[0], 0) + int(parts[1])
    return total


def _qdisc_drops(bed: Testbed, ports: list[int]) -> int:
    total = 0
    for h in ports:
        out = sh("tc", "-s", "-j", "qdisc", "show", "dev", bed.port(h), ns=SWITCH).stdout
        total += sum(q.get("drops", 0) for q in json.loads(out))
    return total


def before_init_dropped(events: np.ndarray) -> np.ndarray:
    """A connection's records from its controller's init on. The kernel acknowledges the SYN
    before it calls init, and the controller's callbacks then log the zeroed state they find
    (TIMELY a rate of 0): no decision of the controller's, and no state to report."""
    inits = events[events["kind"] == logs.EV_INIT]
    first = pd.Series(inits["t_ns"]).groupby(inits["port"]).min()
    start = pd.Series(events["port"]).map(first).fillna(0).to_numpy()
    return events[events["t_ns"] >= start]


def _reading(prog: Program, last: Any, col: str) -> float | None:
    """Column ``col`` read off the last decision ``last`` of ``prog``'s object; None without
    one, or where its object has no such reading (`params.READINGS`)."""
    read = READINGS[prog.obj].get(col)
    return float(read(last["value"], last["aux"])) if read is not None and last is not None else None


def _timeseries(acks: np.ndarray, t_us: np.ndarray, flows: pd.DataFrame, prog: Program, s: dict) -> pd.DataFrame:
    """Each connection's controller state at every `measure.timeseries_interval` (its last
    decision before that instant), from the logged decisions."""
    interval = s["measure"].get("timeseries_interval")
    if not interval or not len(acks):
        return pd.DataFrame()
    dt_us = ps(interval) / 1e6
    by_port = dict(zip(flows["port"], flows["flow"]))
    df = pd.DataFrame(
        {
            "port": acks["port"] & 0xFFFF,
            "t": t_us,
            "value": acks["value"].astype(float),
            "aux": acks["aux"].astype(float),
            "rtt_us": acks["rtt_us"].astype(float),
        }
    )
    df = df[df["port"].isin(by_port) & (df["t"] >= 0)]
    df["time_us"] = (np.floor(df["t"] / dt_us) + 1) * dt_us
    last = df.groupby(["port", "time_us"]).last().reset_index()
    out = pd.DataFrame({"time_us": last["time_us"], "flow": last["port"].map(by_port)})
    for col, read in READINGS[prog.obj].items():
        out[col] = read(last["value"], last["aux"])
    out["rtt_us"] = last["rtt_us"].where(last["rtt_us"] > 0)
    return out.sort_values(["time_us", "flow"]).reset_index(drop=True)
