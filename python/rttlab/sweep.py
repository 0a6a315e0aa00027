"""Runs many scenarios at once on local processes, with a progress bar."""

from __future__ import annotations

import os
from concurrent.futures import ProcessPoolExecutor, as_completed
from typing import Any, Sequence

from tqdm import tqdm

from . import run
from .result import Result
from .scenario import resolve


def _run_one(scenario: dict[str, Any]) -> Result:
    return run(scenario)


def run_all(scenarios: Sequence[dict[str, Any]], *, jobs: int | None = None, desc: str = "runs", progress: bool = True) -> list[Result]:
    """Runs every scenario (dicts, as `rttlab.load` returns) and returns the results in the same
    order. ``jobs`` processes (default: all cores); one process runs them in this one. The bar
    shows runs done and an ETA. An invalid scenario raises its ``ValueError`` before any runs."""
    scenarios = [resolve(s) for s in scenarios]
    jobs = jobs or os.cpu_count() or 1
    results: list[Result | None] = [None] * len(scenarios)
    bar = tqdm(total=len(scenarios), desc=desc, unit="run", disable=not progress)
    with bar:
        if jobs == 1 or len(scenarios) <= 1:
            for i, s in enumerate(scenarios):
                results[i] = _run_one(s)
                bar.update()
        else:
            with ProcessPoolExecutor(max_workers=min(jobs, len(scenarios))) as pool:
                futures = {pool.submit(_run_one, s): i for i, s in enumerate(scenarios)}
                for fut in as_completed(futures):
                    results[futures[fut]] = fut.result()
                    bar.update()
    return [r for r in results if r is not None]
