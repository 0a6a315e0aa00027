"""The ``rttlab`` command: ``run`` a scenario, or ``reproduce`` a paper's table beside the
published numbers."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from . import run
from .reproduce import TARGETS
from .scenario import parse_value
from .sweep import default_cache

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
    ("queue_avg_kb", "queue average", "KB"),
    ("queue_max_kb", "queue max", "KB"),
]


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


def cmd_run(args) -> int:
    result = run(Path(args.scenario), overrides=parse_sets(args.set), seed=args.seed)
    if args.out:
        result.save(args.out)
    if args.json:
        json.dump(result.summary, sys.stdout, indent=2)
        print()
        return 0
    name = result.meta["scenario"].get("name") or args.scenario
    print(f"{name}: {result.meta['scenario']['duration']} simulated, warm-up {result.meta['scenario']['warmup']}, seed {result.meta['seed']}")
    for key, label, unit in SUMMARY_ROWS:
        print(f"  {label:<20} {fmt(result.summary[key]):>10} {unit}")
    perf = result.meta["perf"]
    print(f"  ({perf['events']} events in {perf['wall_s']:.2f} s wall, {perf['events_per_s'] / 1e6:.1f} M events/s)")
    if args.out:
        print(f"wrote {args.out}/")
    return 0


def cmd_reproduce(args) -> int:
    out = args.out or f"results/{args.target}"
    cache_dir = None if args.no_cache else (args.cache or default_cache())
    TARGETS[args.target].reproduce(out, quick=args.quick, jobs=args.jobs, progress=not args.no_progress, cache_dir=cache_dir)
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="rttlab", description="A laboratory for datacenter congestion control.")
    sub = p.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="run one scenario")
    r.add_argument("scenario", help="scenario TOML file")
    r.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override a scenario key (repeatable), e.g. nic.segment=32KB")
    r.add_argument("--seed", type=int, help="replace the scenario's seed")
    r.add_argument("--json", action="store_true", help="print the summary as JSON on stdout")
    r.add_argument("--out", metavar="DIR", help="write summary, metadata and tables (CSV) into DIR")
    r.set_defaults(func=cmd_run)
    rp = sub.add_parser("reproduce", help="regenerate a paper's table or figures beside the published numbers")
    rp.add_argument("target", choices=sorted(TARGETS), help="what to reproduce")
    rp.add_argument("--out", metavar="DIR", help="output directory (default: results/TARGET)")
    rp.add_argument("--quick", action="store_true", help="shorter simulated time, one seed (for CI)")
    rp.add_argument("--jobs", type=int, metavar="N", help="parallel runs (default: all cores)")
    rp.add_argument("--no-progress", action="store_true", help="no progress bar")
    rp.add_argument("--cache", metavar="DIR", help="reuse and store results here (default: $RTTLAB_CACHE or ~/.cache/rttlab/runs)")
    rp.add_argument("--no-cache", action="store_true", help="run everything again, store nothing")
    rp.set_defaults(func=cmd_reproduce)
    args = p.parse_args(argv)
    try:
        return args.func(args)
    except ValueError as e:
        print(f"rttlab: error: {e}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # the reader (e.g. `head`) stopped reading
        sys.stderr.close()
        return 0


if __name__ == "__main__":
    sys.exit(main())
