"""TIMELY (SIGCOMM 2015) Table 1: six systems on the §6.1 incast testbed, beside the paper.

10 clients x 4 connections -> one server behind a 20 Gbps link on one switch. Columns:
DCTCP (window transport, no PFC, ECN at K = 80 KB), FAST* with α = 10, 50, 100 Mbps and TIMELY
(message transport over PFC, the paper's §6 parameters), PFC alone (line rate over PFC). The
paper averages three ten-minute runs; the full run here averages three seeds of ten simulated
seconds each (after a 50 ms warm-up), ``--quick`` one seed of 100 ms.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from ..published import TIMELY_JAIN, TIMELY_TABLE1
from ..result import atomic_dir
from ..scenario import load, set_key, to_toml
from ..sweep import run_all

SCENARIOS = Path(__file__).resolve().parents[3] / "scenarios"

#: (column, scenario file, overrides) in the paper's order.
SYSTEMS: list[tuple[str, str, dict[str, Any]]] = [
    ("DCTCP", "timely-testbed-dctcp.toml", {}),
    *[
        (f"FAST* {a}M", "timely-testbed.toml", {"cc": {"algorithm": "fast", "alpha": f"{a}Mbps"}})
        for a in (10, 50, 100)
    ],
    ("PFC", "timely-testbed-pfc.toml", {}),
    ("TIMELY", "timely-testbed.toml", {}),
]

#: (summary key, label, unit, format) of the table's rows: the paper's three, then the
#: counters the paper reports in its text.
METRICS = [
    ("throughput_gbps", "Total throughput", "Gbps", "{:.1f}"),
    ("rtt_avg_us", "Average RTT", "µs", "{:.0f}"),
    ("rtt_p99_us", "99th-percentile RTT", "µs", "{:.0f}"),
    ("jain", "Jain's fairness index", "", "{:.3f}"),
    ("pauses", "PFC pauses", "", "{:.0f}"),
    ("drops", "Drops", "", "{:.0f}"),
]

FULL = {"duration": "10050ms", "warmup": "50ms", "seeds": [1, 2, 3]}
QUICK = {"duration": "150ms", "warmup": "50ms", "seeds": [1]}


def paper_value(system: str, key: str) -> float | None:
    """The published value of one cell (shared reference published-numbers.md), if any."""
    if key == "jain":
        return TIMELY_JAIN.get(system)
    if key == "pauses" and system == "TIMELY":
        return 0.0  # "pauses are not triggered at all" (§6.1)
    return TIMELY_TABLE1[system].get(key)


def scenarios(quick: bool = False) -> list[tuple[str, int, dict[str, Any]]]:
    """(system, seed, scenario) for every run: the shipped presets with the column's
    controller, the run length, and traces off (only summaries are needed)."""
    plan = QUICK if quick else FULL
    out = []
    for system, file, overrides in SYSTEMS:
        for seed in plan["seeds"]:
            s = load(SCENARIOS / file)
            for key, value in overrides.items():
                set_key(s, key, value)
            s["name"] = f"timely-table1 {system}"
            s["seed"] = seed
            s["duration"], s["warmup"] = plan["duration"], plan["warmup"]
            s.setdefault("measure", {}).update({"queue_trace": False})
            s["measure"].pop("timeseries_interval", None)
            out.append((system, seed, s))
    return out


def run(quick: bool = False, jobs: int | None = None, progress: bool = True, cache_dir: str | Path | None = None) -> tuple[pd.DataFrame, list[tuple[str, int, dict]]]:
    """Runs every column and returns the tidy table (system, metric, unit, rttlab, rttlab_sd,
    paper, ratio) and the resolved scenarios that produced it."""
    plan = scenarios(quick)
    results = run_all([s for _, _, s in plan], jobs=jobs, cache_dir=cache_dir, desc="timely-table1", progress=progress)
    rows = []
    for system, _, _ in SYSTEMS:
        runs = [r for (sys_, _, _), r in zip(plan, results) if sys_ == system]
        for key, label, unit, _ in METRICS:
            values = pd.Series([r.summary[key] for r in runs], dtype="float64")
            ours, paper = values.mean(), paper_value(system, key)
            rows.append(
                {
                    "system": system,
                    "metric": key,
                    "label": label,
                    "unit": unit,
                    "rttlab": ours,
                    "rttlab_sd": values.std(ddof=1) if len(values) > 1 else 0.0,
                    "paper": paper,
                    "ratio": ours / paper if paper else None,
                }
            )
    resolved = [(sys_, seed, r.meta["scenario"]) for (sys_, seed, _), r in zip(plan, results)]
    return pd.DataFrame(rows), resolved


def format_table(df: pd.DataFrame, markdown: bool = False) -> str:
    """Rows = metrics, columns = systems, each cell "rttlab (paper)"."""
    systems = [s for s, _, _ in SYSTEMS]
    lines = []
    header = ["Metric"] + systems
    cells = []
    for key, label, unit, form in METRICS:
        row = [f"{label} ({unit})" if unit else label]
        for system in systems:
            x = df[(df.system == system) & (df.metric == key)].iloc[0]
            ours = form.format(x.rttlab)
            row.append(f"{ours} ({form.format(x.paper)})" if pd.notna(x.paper) else ours)
        cells.append(row)
    if markdown:
        lines.append("| " + " | ".join(header) + " |")
        lines.append("|" + "---|" * len(header))
        lines += ["| " + " | ".join(r) + " |" for r in cells]
    else:
        widths = [max(len(r[i]) for r in [header] + cells) for i in range(len(header))]
        for r in [header] + cells:
            lines.append("  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))))
    return "\n".join(lines)


def plot(df: pd.DataFrame, path: Path) -> None:
    """Grouped bars, rttlab beside the paper, for the paper's three metrics."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    systems = [s for s, _, _ in SYSTEMS]
    fig, axes = plt.subplots(1, 3, figsize=(12, 3.6), constrained_layout=True)
    for ax, (key, label, unit, _) in zip(axes, METRICS[:3]):
        d = df[df.metric == key].set_index("system").loc[systems]
        x = range(len(systems))
        ax.bar([i - 0.2 for i in x], d.rttlab, 0.4, yerr=d.rttlab_sd, label="rttlab", color="#1f77b4")
        ax.bar([i + 0.2 for i in x], d.paper, 0.4, label="paper (Table 1)", color="#bbbbbb", edgecolor="#555555")
        ax.set_xticks(list(x), [s.replace("FAST* ", "FAST*\n") for s in systems], fontsize=8)
        ax.set_ylabel(f"{label} ({unit})")
        if key != "throughput_gbps":
            ax.set_yscale("log")
        ax.grid(axis="y", alpha=0.3)
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside upper right", ncols=2, fontsize=8, frameon=False)
    fig.suptitle("TIMELY Table 1: 40-connection incast into 20 Gbps", fontsize=10, x=0.02, ha="left")
    fig.savefig(path, dpi=150)
    plt.close(fig)


def reproduce(out: str | Path, quick: bool = False, jobs: int | None = None, progress: bool = True, cache_dir: str | Path | None = None) -> pd.DataFrame:
    """Runs Table 1 and writes into ``out``: table1.csv, table1.md, table1.png and
    scenarios/*.toml (every run, re-runnable with ``rttlab run``). Prints the table. Runs found
    in ``cache_dir`` are not run again."""
    df, resolved = run(quick=quick, jobs=jobs, progress=progress, cache_dir=cache_dir)
    with atomic_dir(out) as tmp:
        df.to_csv(tmp / "table1.csv", index=False)
        (tmp / "table1.md").write_text(format_table(df, markdown=True) + "\n")
        plot(df, tmp / "table1.png")
        (tmp / "scenarios").mkdir()
        for system, seed, s in resolved:
            name = system.lower().replace("* ", "-").replace(" ", "-")
            (tmp / "scenarios" / f"{name}-seed{seed}.toml").write_text(to_toml(s))
    plan = QUICK if quick else FULL
    print(f"\nTIMELY Table 1, rttlab (paper); {len(plan['seeds'])} seed(s) x {plan['duration']} simulated, {plan['warmup']} warm-up")
    print(format_table(df))
    print(f"\nwrote {out}/table1.csv, table1.md, table1.png, scenarios/")
    return df
