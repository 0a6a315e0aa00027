"""The ``rttlab`` command: ``run`` a scenario, ``sweep`` one over a grid, ``list`` the experiments,
``reproduce`` a paper's tables and figures as an HTML report beside the published numbers,
``host run`` a scenario on the real kernel."""

from __future__ import annotations

import argparse
import json
import os
import sys
import traceback
from pathlib import Path
from typing import Any, NoReturn

from . import ControllerError, InternalError, __version__, load, presets, run
from .host.build import HostError
from .outputs import check_file, check_result_dir, write_file
from .result import FORMATS, Result
from .scenario import apply_overrides, parse_value
from .sweep import Interrupted, default_cache, grid, run_all, sweep_table

SUMMARY_ROWS = [
    ("throughput_gbps", "throughput (wire)", "Gbps"),
    ("goodput_gbps", "goodput", "Gbps"),
    ("rtt_avg_us", "RTT average", "µs"),
    ("rtt_p50_us", "RTT p50", "µs"),
    ("rtt_p99_us", "RTT p99", "µs"),
    ("rtt_max_us", "RTT max", "µs"),
    ("jain", "Jain's index", ""),
    ("pauses", "PFC pauses sent", ""),
    ("drops", "drops", ""),
    ("ecn_marks", "ECN marks", ""),
    ("retransmits", "retransmissions", ""),
    ("timeouts", "timeouts", ""),
    ("naks", "NAKs and NACKs", ""),
    ("queue_avg_kb", "queue average", "KB"),
    ("queue_max_kb", "queue max", "KB"),
]
#: Shown when the run has the workload or behaviour they describe (their count is non-zero).
WORKLOAD_ROWS = {
    "reordered": [
        ("reordered", "reordered packets", ""),
        ("spurious_retransmits", "spurious retransmits", ""),
    ],
    "repaths": [("repaths", "repaths", "")],
    "trims": [("trims", "packets trimmed", "")],
    "outage_max_us": [
        ("lost_down", "packets lost to links down", ""),
        ("lost_silent", "packets lost silently", ""),
        ("outage_max_us", "longest outage of a connection", "µs"),
    ],
    "rpcs_completed": [
        ("rpcs_completed", "RPCs completed", ""),
        ("rpcs_censored", "RPCs open at the end", ""),
        ("rpc_p50_us", "RPC latency p50 (open ones at their age)", "µs"),
        ("rpc_p99_us", "RPC latency p99 (the same)", "µs"),
    ],
    "ping_samples": [
        ("ping_samples", "pings", ""),
        ("ping_p50_us", "ping RTT p50", "µs"),
        ("ping_p99_us", "ping RTT p99", "µs"),
    ],
    "fct_flows": [
        ("fct_flows", "flows finished", ""),
        ("fct_censored", "flows under way", "at the end: the slowdowns count them at their age"),
        ("slowdown_p50", "FCT slowdown p50", ""),
        ("slowdown_p99", "FCT slowdown p99", ""),
    ],
}


def fmt(v) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.3f}" if abs(v) < 10 else f"{v:.1f}"
    return str(v)


def parse_sets(items: list[str]) -> dict:
    out = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ValueError(f"--set {item!r}: expected KEY=VALUE, e.g. --set nic.segment=32KB")
        out[key.strip()] = parse_value(value.strip())
    return out


def cmd_run(args: argparse.Namespace) -> int:
    overrides = parse_sets(args.set)
    if args.pcap:
        if not args.out:
            raise ValueError("--pcap needs --out DIR: the captures are written there as pcap/PORT.pcap")
        overrides["measure.pcap.ports"] = args.pcap
    if args.threads:
        overrides["run.threads"] = args.threads
    if args.matrix:
        # The scenario gives the fabric; the matrix is all the traffic.
        overrides["flows"] = None
        overrides["workloads"] = [{"kind": "matrix", "file": str(Path(args.matrix).expanduser().resolve())}]
    if args.topo:
        # The file is the whole fabric.
        overrides["topology"] = {"kind": "graph", "file": str(Path(args.topo).expanduser().resolve())}
    if args.out:
        check_result_dir(args.out, force=args.force)
    result = run(args.scenario, overrides=overrides, seed=args.seed, progress=show_progress(args) and not args.json)
    if args.out:
        result.save(args.out, force=args.force, format=args.format)
    for w in result.meta.get("warnings", []):
        print(f"rttlab: warning: {w}", file=sys.stderr)
    detail = breakdown(result)
    if args.json:
        json.dump({**result.summary, **detail}, sys.stdout, indent=2)
        print()
        return 0
    name = result.meta["scenario"].get("name") or args.scenario
    sc = result.meta["scenario"]
    simulated = (
        f"{result.meta['perf']['simulated_s'] * 1e3:g}ms simulated (until the flows were done, at most {sc['duration']})"
        if sc.get("until") == "flows_done"
        else f"{sc['duration']} simulated"
    )
    print(f"{name}: {simulated}, warm-up {sc['warmup']}, seed {result.meta['seed']}")
    rows = SUMMARY_ROWS + [row for count, extra in WORKLOAD_ROWS.items() if result.summary[count] for row in extra]
    for key, label, unit in rows:
        print(f"  {label:<20} {fmt(result.summary[key]):>10} {unit}")
    if detail["groups"]:
        print(f"  {'[[flows]] group':<20} {'flows':>6} {'Mbps per flow':>14} {'Jain':>6} {'Gbps in all':>12}")
        for g in detail["groups"]:
            print(
                f"  {g['group']:<20} {g['flows']:>6} {g['goodput_per_flow_mbps']:>14.1f} {g['jain']:>6.3f} {g['goodput_gbps']:>12.3f}"
            )
    if detail["ports"]:
        shown = busiest(detail["ports"])
        print(
            f"  {'sampled port':<20} {'class':>5} {'payload Gbps':>12} {'util.':>6} {'queue KB':>9} {'queue delay µs':>15} {'ECN marks':>10}"
        )
        for p in shown:
            print(
                f"  {p['port']:<20} {p['class']:>5} {p['payload_gbps']:>12.3f} {p['utilization']:>6.3f} {p['queue_avg_kb']:>9.1f} {p['queue_delay_avg_us']:>15.1f} {p['ecn_marks']:>10}"
            )
        if len(shown) < len(detail["ports"]):
            more = len(detail["ports"]) - len(shown)
            print(
                f"  ({len(shown)} busiest of {len(detail['ports'])} by utilization, then queue; {more} more in the ports table: --out DIR, or result.ports)"
            )
    if detail["jobs"]:
        print(
            f"  {'job':<20} {'collective':>18} {'cc':>14} {'transport':>9} {'connections':>12} {'iter.':>5} {'completion µs':>14} {'ideal µs':>9} {'slowdown':>9}"
        )
        for j in detail["jobs"]:
            print(
                f"  {j['job']:<20} {j['collective']:>18} {j['cc']:>14} {j['transport']:>9} {j['connections']:>12} {j['iteration']:>5} {fmt(j['completion_us']):>14} {j['ideal_us']:>9.1f} {fmt(j['slowdown']):>9}"
            )
    perf = result.meta["perf"]
    print(f"  ({perf['events']} events in {perf['wall_s']:.2f} s wall, {perf['events_per_s'] / 1e6:.1f} M events/s)")
    for line in thread_lines(perf):
        print(f"  {line}")
    if args.out:
        print(f"wrote {args.out}/")
    return 0


#: A summary lists every sampled port up to this many; beyond, the busiest this many.
PORTS_SHOWN = 12


def busiest(ports: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every sampled port on a small fabric; on a big one the busiest ``PORTS_SHOWN``, by
    utilization and then mean queue, in the ports table's order."""
    if len(ports) <= PORTS_SHOWN:
        return ports
    ranked = sorted(range(len(ports)), key=lambda i: (-ports[i]["utilization"], -ports[i]["queue_avg_kb"], i))
    return [ports[i] for i in sorted(ranked[:PORTS_SHOWN])]


def thread_lines(perf: dict[str, Any]) -> list[str]:
    """Where each thread of a run on several spent its time (``perf.partitions``, estimated from
    one turn of its loop in 16): handling its partition's events, waiting for the others, the mail."""
    lines = []
    for q, p in enumerate(perf.get("partitions") or []):
        total = (p["events_s"] + p["waiting_s"] + p["mail_s"]) or 1.0
        pct = {k: 100 * p[k] / total for k in ("events_s", "waiting_s", "mail_s")}
        lines.append(
            f"(thread {q}: {p['events']} events; {pct['events_s']:.0f} % on events, {pct['waiting_s']:.0f} % waiting for the others, {pct['mail_s']:.0f} % on mail)"
        )
    return lines


def breakdown(result: Result) -> dict[str, list[dict[str, Any]]]:
    """Per ``[[flows]]`` group: connections, mean goodput per connection and Jain's index; per
    sampled port (``measure.queue_ports``): payload rate, utilization, mean queue and its
    delay, ECN marks — what ns-3's DCTCP example prints, for any scenario; per ``[[jobs]]``
    entry and iteration: its completion against the bandwidth-optimal time."""
    measured = result.summary["measured_s"]
    connections = result.flows["group"].value_counts()
    groups = [
        {
            "group": str(g["group"]),
            "flows": int(connections.get(i, 0)),
            "goodput_per_flow_mbps": g["goodput_per_flow_gbps"] * 1e3,
            "jain": g["jain"],
            "goodput_gbps": g["goodput_gbps"],
        }
        for i, g in enumerate(result.groups.to_dict("records"))
        if str(g["kind"]) == "flows"
    ]
    ports = [
        {
            "port": str(p["port"]),
            "class": int(p["class"]),
            "payload_gbps": p["tx_payload_bytes"] * 8 / measured / 1e9,
            "utilization": p["utilization"],
            "queue_avg_kb": p["queue_avg_kb"],
            "queue_delay_avg_us": p["queue_delay_avg_us"],
            "ecn_marks": int(p["ecn_marks"]),
        }
        for p in result.ports.to_dict("records")
        if p["queue_p99_kb"] == p["queue_p99_kb"]  # sampled: not NaN
    ]
    jobs = [
        {
            "job": str(j["group"]),
            "collective": str(j["collective"]),
            "cc": str(j["cc"]),
            "transport": str(j["transport"]),
            "connections": str(j["connections"]),
            "iteration": int(j["iteration"]),
            "completion_us": None if j["completion_us"] != j["completion_us"] else j["completion_us"],
            "ideal_us": j["ideal_us"],
            "slowdown": None if j["slowdown"] != j["slowdown"] else j["slowdown"],
        }
        for j in result.jobs.to_dict("records")
    ]
    return {"groups": groups, "ports": ports, "jobs": jobs}


def show_progress(args: argparse.Namespace) -> bool:
    """Progress bars go to a terminal only, and not with --no-progress."""
    return not args.no_progress and sys.stderr.isatty()


def cache_dir(args: argparse.Namespace) -> Path | None:
    return None if args.no_cache else Path(args.cache) if args.cache else default_cache()


HOST_ROWS = [
    ("goodput_gbps", "goodput", "Gbps"),
    ("rtt_p50_us", "RTT p50 (kernel)", "µs"),
    ("rtt_p99_us", "RTT p99 (kernel)", "µs"),
    ("jain", "Jain's index", ""),
    ("drops", "drops", ""),
    ("ecn_marks", "ECN marks", ""),
    ("marking_fraction", "marked fraction", ""),
    ("retransmits", "retransmissions", ""),
    ("queue_avg_kb", "queue average", "KB"),
    ("queue_p99_kb", "queue p99", "KB"),
    ("queue_seen_p50_kb", "queue at arrival p50", "KB"),
    ("queue_seen_p99_kb", "queue at arrival p99", "KB"),
    ("flows_finished", "flows finished", ""),
]


def cmd_host_run(args: argparse.Namespace) -> int:
    from . import host

    overrides = parse_sets(args.set)
    if args.out:
        check_result_dir(args.out, force=args.force)
    result = host.run(args.scenario, overrides, tso=args.tso == "on", decisions=args.decisions)
    if args.out:
        result.save(args.out, force=args.force, format=args.format)
    for w in result.meta.get("warnings", []):
        print(f"rttlab: warning: {w}", file=sys.stderr)
    if args.json:
        json.dump(result.summary, sys.stdout, indent=2)
        print()
        return 0
    h = result.meta["host"]
    sc = result.meta["scenario"]
    print(
        f"{sc.get('name') or args.scenario} on the kernel ({h['kernel']}, {h['controller']}, TSO {'on' if h['tso'] else 'off'}): {sc['duration']}, warm-up {sc['warmup']}"
    )
    for key, label, unit in HOST_ROWS:
        print(f"  {label:<22} {fmt(result.summary.get(key)):>10} {unit}")
    if h["base_rtt_us"]:
        print(f"  {'base RTT (min, median)':<22} {h['base_rtt_us']['min']:>5.0f}, {h['base_rtt_us']['median']:.0f} µs")
    if args.out:
        print(f"wrote {args.out}/")
    return 0


def cmd_host_clean(args: argparse.Namespace) -> int:
    from . import host

    gone = host.remove_all()
    print("\n".join(f"removed {g}" for g in gone) or "nothing of the testbed's was left")
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    from .experiments import REGISTRY, groups

    if args.scenarios:
        print("Scenario presets (rttlab run NAME; a file of the same name in the working directory wins):")
        for name in presets.names():
            print(f"  {name:<28} {presets.description(name)}")
        return 0

    for group, names in groups().items():
        print(f"{group}  (rttlab reproduce {group}: all {len(names)} as one report)")
        for n in names:
            print(f"  {n:<18} {REGISTRY[n].title}")
    return 0


#: Report titles of experiment groups (a single experiment's report takes its title).
TITLES = {
    "timely": "TIMELY (SIGCOMM 2015), §4.4 and §6.1 experiments, reproduced with rttlab",
    "swift": "Swift (SIGCOMM 2020), §5 experiments, reproduced with rttlab",
    "dctcp": "DCTCP (SIGCOMM 2010): ns-3's DCTCP example and the queue analysis, reproduced with rttlab",
    "collectives": "Training-cluster traffic: ring all-reduce against its ideal per scheme and routing mode, two jobs contending",
    "multipath": "Congestion control with path choice: ECMP, flowlets, spraying, REPS, adaptive routing, PLB and feedback filters",
    "failures": "Fabrics that fail: a core link down with and without PRR, a degraded link per routing mode, silent losses per transport",
    "cs244": "The CS244 reproductions of TIMELY (2016, 2019) and HPCC on in-band telemetry, rerun with rttlab",
    "shootout": "DCQCN, TIMELY, Patched TIMELY, DCTCP, Swift and HPCC on one fat-tree: FCT slowdown per flow size",
}


def cmd_reproduce(args: argparse.Namespace) -> int:
    from . import report
    from .experiments import execute, select

    exps = select(args.target)
    out = Path(args.out or f"results/{args.target}")
    check_result_dir(out, force=args.force)
    done = execute(
        exps,
        quick=args.quick,
        jobs=args.jobs,
        threads=args.threads,
        cache_dir=cache_dir(args),
        scheduler=args.scheduler,
        scheduler_timeout=args.scheduler_timeout,
        progress=show_progress(args),
    )
    title = TITLES.get(args.target) or exps[0].title
    report.write(out, done, title=title, quick=args.quick, force=args.force)
    for ex in done:
        o = ex.outcome
        held = sum(c.holds for c in o.checks)
        print(f"\n{ex.experiment.name}: {ex.experiment.title} — {held} of {len(o.checks)} stated trends hold")
        if o.console:
            print(o.console)
        for c in o.checks:
            print(f"  {'✔' if c.holds else '✘'} {c.claim}: {c.measured}")
    print(f"\nwrote {out}/index.html (open it in a browser), data/, figures/, scenarios/")
    return 0


def parse_grid(items: list[str]) -> dict[str, list]:
    axes = {}
    for item in items:
        key, sep, values = item.partition("=")
        if not sep or not key.strip() or not values.strip():
            raise ValueError(f"--grid {item!r}: expected KEY=V1,V2,..., e.g. --grid cc.t_low=0us,50us,100us")
        axes[key.strip()] = [parse_value(v.strip()) for v in values.split(",")]
    return axes


def cmd_sweep(args: argparse.Namespace) -> int:
    out = Path(args.out)
    if out.suffix not in (".csv", ".parquet"):
        raise ValueError(f"--out {args.out!r}: the file name must end in .csv or .parquet")
    check_file(out, force=args.force)
    base = apply_overrides(load(args.scenario), parse_sets(args.set))
    axes = parse_grid(args.grid)
    seeds = args.seeds or [base.get("seed", 1)]
    cells = grid(base, {**axes, "seed": seeds})
    results = run_all(
        [s for _, s in cells],
        jobs=args.jobs,
        threads=args.threads,
        cache_dir=cache_dir(args),
        scheduler=args.scheduler,
        scheduler_timeout=args.scheduler_timeout,
        desc="sweep",
        progress=show_progress(args),
    )
    df = sweep_table(cells, results)
    write_file(
        out,
        lambda tmp: df.to_csv(tmp, index=False) if out.suffix == ".csv" else df.to_parquet(tmp, index=False),
        force=args.force,
    )
    cols = [*axes, "seed", "throughput_gbps", "rtt_avg_us", "rtt_p99_us"]
    print(df[cols].to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    print(f"wrote {out} ({len(df)} rows, {len(df.columns)} columns)")
    warned = [(point, w) for (point, _), r in zip(cells, results) for w in r.meta.get("warnings", [])]
    for point, w in warned:
        print(f"rttlab: warning: at {point}: {w}", file=sys.stderr)
    return 0


def positive_int(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"{n}: must be 1 or more")
    return n


def positive_seconds(text: str) -> float:
    try:
        t = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not t > 0 or t == float("inf"):
        raise argparse.ArgumentTypeError(f"{text}: must be a positive, finite number of seconds")
    return t


def seed_list(text: str) -> list[int]:
    seeds = []
    for item in text.split(","):
        try:
            seeds.append(int(item))
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"{item.strip()!r} in {text!r} is not a whole number; give seeds as S1,S2,..., e.g. 1,2,3"
            ) from None
        if not 0 <= seeds[-1] < 2**64:
            raise argparse.ArgumentTypeError(f"{item.strip()} in {text!r}: a seed is between 0 and 2^64 - 1")
    return seeds


def add_runner_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--jobs", type=positive_int, metavar="N", help="parallel local runs (default: all cores)")
    p.add_argument(
        "--threads",
        type=positive_int,
        metavar="N",
        help="threads for each run (run.threads; default: one each when runs go side by side, else the scenario's choice)",
    )
    p.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="run on this Dask distributed scheduler (e.g. tcp://10.0.0.1:8786) instead of local processes",
    )
    p.add_argument(
        "--scheduler-timeout",
        type=positive_seconds,
        default=5.0,
        metavar="SECONDS",
        help="give up connecting to --scheduler after this long (default: 5)",
    )
    p.add_argument(
        "--cache", metavar="DIR", help="reuse and store results here (default: $RTTLAB_CACHE or ~/.cache/rttlab/runs)"
    )
    p.add_argument("--no-cache", action="store_true", help="run everything again, store nothing")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")


def printable(message: str) -> str:
    """``message`` on one line, control characters (from the user's input) escaped."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in message)


class Parser(argparse.ArgumentParser):
    """Usage errors on one line (with where to find help), exit 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {printable(message)} (see {self.prog} --help)\n")


def main(argv: list[str] | None = None) -> int:
    p = Parser(prog="rttlab", description="A laboratory for datacenter congestion control.")
    p.add_argument("--version", action="version", version=f"rttlab {__version__}")
    sub = p.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="run one scenario")
    r.add_argument("scenario", help="scenario TOML file, or a preset's name (rttlab list --scenarios)")
    r.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a scenario key (repeatable), e.g. nic.segment=32KB",
    )
    r.add_argument("--seed", type=int, help="replace the scenario's seed")
    r.add_argument(
        "--threads",
        type=positive_int,
        metavar="N",
        help="run on N threads (run.threads; the same results for any N; default: every core for a fabric of 64 hosts or more)",
    )
    r.add_argument(
        "--matrix",
        metavar="FILE",
        help="run htsim's connection matrix FILE on the scenario's fabric, in place of its flows and workloads (the transfers table gives each transfer's times by its id)",
    )
    r.add_argument(
        "--topo",
        metavar="FILE",
        help="run on the fabric of htsim's topology FILE (.topo: a fat-tree's tiers) or the HPCC simulator's, in place of the scenario's [topology]",
    )
    r.add_argument("--json", action="store_true", help="print the summary as JSON on stdout")
    r.add_argument("--out", metavar="DIR", help="write summary, metadata and tables into the new directory DIR")
    r.add_argument(
        "--format",
        choices=FORMATS,
        default="csv",
        help="the tables' format with --out (default csv; parquet keeps the column types)",
    )
    r.add_argument(
        "--force", action="store_true", help="replace DIR if it holds an earlier rttlab result (never anything else)"
    )
    r.add_argument(
        "--pcap",
        action="append",
        default=[],
        metavar="PORT",
        help="capture what egress PORT (NODE-PEER, e.g. s0-h0) sends into DIR/pcap/PORT.pcap (repeatable; with --out; [measure.pcap] sets the limits)",
    )
    r.add_argument(
        "--no-progress",
        action="store_true",
        help="no progress bar (there is none when stderr is not a terminal, or with --json)",
    )
    r.set_defaults(func=cmd_run)
    sw = sub.add_parser("sweep", help="run a scenario over a grid of values; one tidy table of summaries")
    sw.add_argument("scenario", help="scenario TOML file, or a preset's name (rttlab list --scenarios)")
    sw.add_argument(
        "--grid",
        action="append",
        default=[],
        metavar="KEY=V1,V2,...",
        help="an axis of the grid (repeatable); every combination runs",
    )
    sw.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a scenario key for every point (repeatable)",
    )
    sw.add_argument(
        "--seeds", type=seed_list, metavar="S1,S2,...", help="run every point with each seed (default: the scenario's)"
    )
    sw.add_argument(
        "--out",
        required=True,
        metavar="FILE",
        help="FILE.csv or FILE.parquet: one row per run, the grid's values and the summary",
    )
    sw.add_argument("--force", action="store_true", help="replace FILE if it exists")
    add_runner_options(sw)
    sw.set_defaults(func=cmd_sweep)
    ls = sub.add_parser("list", help="list the experiments that reproduce can run, or the scenario presets")
    ls.add_argument(
        "--scenarios", action="store_true", help="list the scenario presets that run and sweep accept by name"
    )
    ls.set_defaults(func=cmd_list)
    rp = sub.add_parser(
        "reproduce", help="regenerate a paper's tables and figures as an HTML report beside the published numbers"
    )
    rp.add_argument("target", help="an experiment or a group of them (see rttlab list), e.g. timely")
    rp.add_argument(
        "--out", metavar="DIR", help="output directory, new or an earlier report with --force (default: results/TARGET)"
    )
    rp.add_argument(
        "--force", action="store_true", help="replace DIR if it holds an earlier rttlab result (never anything else)"
    )
    rp.add_argument("--quick", action="store_true", help="short runs, one seed (for CI)")
    add_runner_options(rp)
    rp.set_defaults(func=cmd_reproduce)

    hp = sub.add_parser(
        "host", help="the real host: a scenario as Linux TCP in network namespaces (root, kernel BTF; docs/host.md)"
    )
    hsub = hp.add_subparsers(dest="host_command", required=True, metavar="COMMAND")
    hr = hsub.add_parser(
        "run", help="run a star scenario on the kernel: rttlab's controllers as BPF congestion control"
    )
    hr.add_argument("scenario", help="scenario TOML file, or a preset's name (rttlab list --scenarios)")
    hr.add_argument(
        "--set", action="append", default=[], metavar="KEY=VALUE", help="override a scenario key (repeatable)"
    )
    hr.add_argument("--json", action="store_true", help="print the summary as JSON on stdout")
    hr.add_argument("--out", metavar="DIR", help="write summary, metadata and tables into the new directory DIR")
    hr.add_argument("--format", choices=FORMATS, default="csv", help="the tables' format with --out")
    hr.add_argument(
        "--force", action="store_true", help="replace DIR if it holds an earlier rttlab result (never anything else)"
    )
    hr.add_argument(
        "--tso",
        choices=("on", "off"),
        default="on",
        help="the hosts' NICs segment TCP's bursts (default on; off: every packet on its own, which leaves the senders too little of their core to fill their windows; docs/host.md)",
    )
    hr.add_argument(
        "--decisions", action="store_true", help="keep every decision the controller logged (table decisions)"
    )
    hr.set_defaults(func=cmd_host_run)
    hc = hsub.add_parser(
        "clean", help="remove whatever a crashed host run left (namespaces rttlab-*, struct_ops rttlab_*)"
    )
    hc.set_defaults(func=cmd_host_clean)
    args = p.parse_args(argv)
    try:
        return args.func(args)
    except ValueError as e:
        print(f"rttlab: error: {printable(str(e))}", file=sys.stderr)
        return 2
    except ControllerError as e:  # the user's controller failed: their traceback, then what
        cause = e.__cause__
        if cause is not None:
            traceback.print_exception(cause, file=sys.stderr)
        print(f"rttlab: error: {printable(str(e))}", file=sys.stderr)
        return 1
    except HostError as e:  # the machine cannot run the testbed, or it failed there
        print(f"rttlab: error: {printable(str(e))}", file=sys.stderr)
        return 1
    except InternalError as e:  # a bug: say so, without a traceback (EX_SOFTWARE)
        print(f"rttlab: {printable(str(e))}", file=sys.stderr)
        return 70
    except Interrupted as e:
        if not e.finished:
            kept = "none had finished"
        elif e.cache_dir:
            kept = f"{e.finished} of {e.total} runs had finished and are cached in {e.cache_dir}: the same command resumes from there"
        else:
            kept = f"{e.finished} of {e.total} runs had finished; none were kept (--no-cache)"
        print(f"\nrttlab: interrupted; {kept}", file=sys.stderr)
        return 130
    except KeyboardInterrupt:
        print("\nrttlab: interrupted; nothing was written", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader (e.g. `head`) stopped reading
        sys.stderr.close()
        return 0
    except OSError as e:  # the machine's problem (disk full, permissions), not the input's
        print(f"rttlab: error: {printable(str(e))}", file=sys.stderr)
        return 1
    except Exception as e:  # a bug: one line, the traceback on request (EX_SOFTWARE)
        if os.environ.get("RTTLAB_DEBUG"):
            raise
        print(
            f"rttlab: internal error (a bug in rttlab; please report it, with RTTLAB_DEBUG=1 for the traceback): {type(e).__name__}: {printable(str(e))}",
            file=sys.stderr,
        )
        return 70


if __name__ == "__main__":
    sys.exit(main())
