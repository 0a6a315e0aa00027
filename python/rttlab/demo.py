"""``make demo``: the TIMELY §6.1 testbed, run in rttlab, beside the paper's Table 1."""

from __future__ import annotations

from pathlib import Path

from . import run
from .published import TIMELY_JAIN, TIMELY_TABLE1

SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios"
SYSTEMS = [("PFC", "timely-testbed-pfc.toml"), ("TIMELY", "timely-testbed.toml")]
ROWS = [
    ("throughput_gbps", "throughput (Gbps)", "{:.1f}"),
    ("rtt_avg_us", "average RTT (µs)", "{:.0f}"),
    ("rtt_p99_us", "99th-pct RTT (µs)", "{:.0f}"),
    ("jain", "Jain's index", "{:.3f}"),
    ("pauses", "PFC pauses", "{}"),
    ("drops", "drops", "{}"),
]


def paper(system: str, key: str):
    if key == "jain":
        return TIMELY_JAIN.get(system)
    if key == "pauses":
        return 0 if system == "TIMELY" else None
    return TIMELY_TABLE1[system].get(key)


def main(quick: bool = False) -> int:
    results = {}
    for system, file in SYSTEMS:
        overrides = {"duration": "100ms"} if quick else {}
        results[system] = run(SCENARIOS / file, overrides=overrides)
        print(f"ran {system}: {results[system].meta['perf']['wall_s']:.2f} s wall", flush=True)
    print()
    print("TIMELY testbed (§6.1): 10 clients x 4 connections -> 1 server at 20 Gbps, 16 KB segments")
    print("rttlab beside the paper's Table 1 (throughput is wire throughput after the warm-up)")
    header = f"{'':<20}" + "".join(f"{s:>12} {'paper':>8}" for s, _ in SYSTEMS)
    print(header)
    for key, label, form in ROWS:
        cells = []
        for system, _ in SYSTEMS:
            v, ref = results[system].summary[key], paper(system, key)
            cells.append(f"{_fmt(v, form):>12} {_fmt(ref, form):>8}")
        print(f"{label:<20}" + "".join(cells))
    print("\nPFC's RTT is set by Little's law: 40 connections x 64 KB outstanding / 20 Gbps ~ 1 ms;")
    print("see docs/model.md for what drives each difference from the paper.")
    return 0


def _fmt(v, form: str) -> str:
    return "-" if v is None else form.format(v)
