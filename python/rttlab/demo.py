"""``make demo``: the TIMELY §6.1 testbed, run in rttlab, beside the paper's Table 1."""

from __future__ import annotations

from pathlib import Path

from . import run
from .published import TIMELY_JAIN, TIMELY_TABLE1

SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios"
SYSTEMS = [("PFC", "timely-testbed-pfc.toml")]
ROWS = [
    ("throughput_gbps", "throughput (Gbps)"),
    ("rtt_avg_us", "average RTT (µs)"),
    ("rtt_p99_us", "99th-pct RTT (µs)"),
    ("jain", "Jain's index"),
    ("pauses", "PFC pauses"),
    ("drops", "drops"),
]


def paper(system: str, key: str):
    if key == "jain":
        return TIMELY_JAIN.get(system)
    if key == "pauses":
        return 0 if system == "TIMELY" else None
    return TIMELY_TABLE1[system].get(key)


def main(quick: bool = False) -> int:
    overrides = {"duration": "30ms", "warmup": "5ms"} if quick else {}
    results = {}
    for system, file in SYSTEMS:
        results[system] = run(SCENARIOS / file, overrides=overrides)
        print(f"ran {system}: {results[system].meta['perf']['wall_s']:.2f} s wall", flush=True)
    print()
    print("TIMELY testbed (§6.1): 10 clients x 4 connections -> 1 server at 20 Gbps, 16 KB segments")
    header = f"{'':<20}" + "".join(f"{s:>12} {'paper':>8}" for s, _ in SYSTEMS)
    print(header)
    for key, label in ROWS:
        cells = []
        for system, _ in SYSTEMS:
            v, ref = results[system].summary[key], paper(system, key)
            cells.append(f"{_fmt(v):>12} {_fmt(ref):>8}")
        print(f"{label:<20}" + "".join(cells))
    return 0


def _fmt(v) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.3f}" if v < 10 else f"{v:.0f}"
    return str(v)
