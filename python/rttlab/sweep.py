"""Runs many scenarios at once on local processes, with a progress bar and an on-disk cache.

Each result is cached under the hash of its resolved scenario (every default written out) and of
the simulator build, written atomically: an interrupted sweep resumes where it stopped, and a
re-run of the same scenarios costs nothing. Any rebuild of the simulator starts a new cache
generation, so a cached result is always what the current code computes.
"""

from __future__ import annotations

import hashlib
import json
import os
from concurrent.futures import ProcessPoolExecutor, as_completed
from functools import cache
from pathlib import Path
from typing import Any, Sequence

from tqdm import tqdm

from . import _core
from .result import Result, atomic_write
from .scenario import resolve


def default_cache() -> Path:
    """``$RTTLAB_CACHE``, else ``~/.cache/rttlab/runs``."""
    return Path(os.environ.get("RTTLAB_CACHE") or Path.home() / ".cache" / "rttlab" / "runs")


@cache
def _engine_id() -> str:
    """Identifies the simulator build: a hash of the compiled core."""
    return hashlib.sha256(Path(_core.__file__).read_bytes()).hexdigest()[:16]


def scenario_key(resolved: dict[str, Any]) -> str:
    """The cache key of a resolved scenario under this simulator build."""
    text = json.dumps(resolved, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(f"{_engine_id()}\n{text}".encode()).hexdigest()


def _run_json(resolved: dict[str, Any]) -> str:
    return _core.run_json(json.dumps(resolved))


def run_all(
    scenarios: Sequence[dict[str, Any]],
    *,
    jobs: int | None = None,
    cache_dir: str | Path | None = None,
    desc: str = "runs",
    progress: bool = True,
) -> list[Result]:
    """Runs every scenario (dicts, as `rttlab.load` returns) and returns the results in the same
    order. ``jobs`` processes (default: all cores). With ``cache_dir``, results found there are
    reused and new ones stored. Every scenario is validated first: an invalid one raises its
    ``ValueError`` before anything runs."""
    resolved = [resolve(s) for s in scenarios]
    paths = [Path(cache_dir) / f"{scenario_key(s)}.json" if cache_dir else None for s in resolved]
    results: list[Result | None] = [None] * len(resolved)
    todo = []
    for i, path in enumerate(paths):
        if path is not None and path.exists():
            results[i] = Result.from_json(path.read_text())
        else:
            todo.append(i)

    def done(i: int, text: str) -> None:
        if paths[i] is not None:
            atomic_write(paths[i], text)
        results[i] = Result.from_json(text)
        bar.update()

    jobs = min(jobs or os.cpu_count() or 1, max(len(todo), 1))
    bar = tqdm(total=len(resolved), initial=len(resolved) - len(todo), desc=desc, unit="run", disable=not progress)
    with bar:
        if jobs == 1:
            for i in todo:
                done(i, _run_json(resolved[i]))
        else:
            with ProcessPoolExecutor(max_workers=jobs) as pool:
                futures = {pool.submit(_run_json, resolved[i]): i for i in todo}
                for fut in as_completed(futures):
                    done(futures[fut], fut.result())
    return [r for r in results if r is not None]
