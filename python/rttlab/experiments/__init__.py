"""The experiments registry: each experiment builds its scenarios from a few parameters, runs
them through the sweep runner, and returns tidy data, a figure, its numbers beside the paper's,
and the paper's stated trends checked on what it measured.

``rttlab list`` prints the registry; ``rttlab reproduce NAME`` (or a group such as ``timely``)
runs experiments and writes the HTML report (`rttlab.report`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from ..result import Result
from ..sweep import run_all


@dataclass
class Point:
    """One run of an experiment: the labels that place it in the figure, and its scenario."""

    labels: dict[str, Any]
    scenario: dict[str, Any]


@dataclass
class Run:
    """A point's labels and its result."""

    labels: dict[str, Any]
    result: Result

    def slug(self) -> str:
        """A file name from the labels, e.g. ``segment_kb-64_t_low_us-50_seed-1``."""
        text = "_".join(f"{k}-{v}" for k, v in self.labels.items())
        return re.sub(r"[^A-Za-z0-9_.-]+", "", text.replace(" ", "-").replace("*", ""))


@dataclass
class Check:
    """A trend the paper states, and whether it holds here, with the numbers that decide it."""

    claim: str
    holds: bool
    measured: str


@dataclass
class Outcome:
    """What an experiment returns. ``table`` has the columns quantity, unit, rttlab, paper;
    ``data`` maps a name to every plotted series as a tidy frame; ``discussion`` is the
    paragraph on agreement, or the reason for a difference."""

    figure: Any
    table: pd.DataFrame
    checks: list[Check]
    data: dict[str, pd.DataFrame]
    discussion: str
    console: str | None = None


@dataclass(frozen=True)
class Experiment:
    """``points(quick)`` lists the runs; ``analyse(runs, quick)`` turns their results into an
    `Outcome`. ``paper`` says what the paper shows."""

    name: str
    group: str
    title: str
    paper: str
    points: Callable[[bool], list[Point]] = field(repr=False)
    analyse: Callable[[list[Run], bool], Outcome] = field(repr=False)
    #: What the section's numbers stand beside: the paper's, or (the real host) the kernel's.
    reference: str = "paper"


REGISTRY: dict[str, Experiment] = {}


def register(exp: Experiment) -> Experiment:
    if exp.name in REGISTRY:
        raise ValueError(f"experiment {exp.name!r} registered twice")
    REGISTRY[exp.name] = exp
    return exp


def groups() -> dict[str, list[str]]:
    """Group name -> its experiments, in registry order."""
    out: dict[str, list[str]] = {}
    for exp in REGISTRY.values():
        out.setdefault(exp.group, []).append(exp.name)
    return out


def select(target: str) -> list[Experiment]:
    """The experiments a name stands for: a group (``timely``) or one experiment."""
    if target in REGISTRY:
        return [REGISTRY[target]]
    names = groups().get(target)
    if not names:
        allowed = ", ".join(sorted(set(REGISTRY) | set(groups())))
        raise ValueError(f"target = {target!r}: unknown; allowed: {allowed}")
    return [REGISTRY[n] for n in names]


@dataclass
class Executed:
    experiment: Experiment
    outcome: Outcome
    runs: list[Run]


def execute(
    experiments: list[Experiment],
    *,
    quick: bool = False,
    jobs: int | None = None,
    cache_dir: str | Path | None = None,
    scheduler: Any = None,
    scheduler_timeout: float = 5.0,
    progress: bool = True,
    threads: int | None = None,
) -> list[Executed]:
    """Runs every point of every experiment in one sweep (points shared between experiments
    run once), then analyses each experiment."""
    plans = [(e, e.points(quick)) for e in experiments]
    scenarios = [p.scenario for _, pts in plans for p in pts]
    results = iter(
        run_all(
            scenarios,
            jobs=jobs,
            threads=threads,
            cache_dir=cache_dir,
            scheduler=scheduler,
            scheduler_timeout=scheduler_timeout,
            desc="runs",
            progress=progress,
        )
    )
    out = []
    for exp, pts in plans:
        runs = [Run(p.labels, next(results)) for p in pts]
        out.append(Executed(exp, exp.analyse(runs, quick), runs))
    return out


def _load_all() -> None:
    from . import (
        collectives,  # noqa: F401  (registers training-cluster traffic)
        cs244,  # noqa: F401  (registers the CS244 reproductions)
        dctcp,  # noqa: F401  (registers the DCTCP experiments)
        failures,  # noqa: F401  (registers fabrics that fail: links down, degraded, lossy)
        host,  # noqa: F401  (registers the simulator beside the kernel)
        multipath,  # noqa: F401  (registers path choice: routing modes, PLB, feedback)
        shootout,  # noqa: F401  (registers the scheme comparison)
        swift,  # noqa: F401  (registers the Swift experiments)
        timely,  # noqa: F401  (registers the TIMELY experiments)
        training,  # noqa: F401  (registers Ultra Ethernet against the rest on training traffic)
        uec,  # noqa: F401  (registers Ultra Ethernet's transport against htsim's plans)
    )


_load_all()
