"""Runs many scenarios at once on local processes, with a progress bar and an on-disk cache.

Each result is cached under the hash of its resolved scenario (every default written out) and of
the simulator build, written atomically: an interrupted sweep resumes where it stopped, and a
re-run of the same scenarios costs nothing. Any rebuild of the simulator starts a new cache
generation, so a cached result is always what the current code computes.
"""

from __future__ import annotations

import copy
import hashlib
import itertools
import json
import multiprocessing
import os
import signal
from collections.abc import Callable, Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any

import pandas as pd
from tqdm import tqdm

from . import _core, controller
from .outputs import atomic_write, prepare_cache
from .result import Result
from .scenario import apply_overrides, resolve, to_json


def default_cache() -> Path:
    """``$RTTLAB_CACHE``, else ``~/.cache/rttlab/runs``."""
    return Path(os.environ.get("RTTLAB_CACHE") or Path.home() / ".cache" / "rttlab" / "runs")


@cache
def _engine_id() -> str:
    """Identifies the simulator build: a hash of the compiled core."""
    return hashlib.sha256(Path(_core.__file__).read_bytes()).hexdigest()[:16]


def scenario_key(resolved: dict[str, Any]) -> str:
    """The cache key of a resolved scenario under this simulator build (and, for a Python
    controller, the file that defines it: an edited controller runs again; and the files the
    scenario names, a topology file or a connection matrix: an edited file runs again).
    ``[run]`` is left out: the thread count changes how fast a result comes, never its bytes."""
    text = json.dumps({k: v for k, v in resolved.items() if k != "run"}, sort_keys=True, separators=(",", ":"))
    cc = resolved.get("cc") or {}
    code = controller.source_hash(controller.import_class(cc["class"])) if cc.get("algorithm") == "python" else ""
    return hashlib.sha256(f"{_engine_id()}{code}{_named_files(resolved)}\n{text}".encode()).hexdigest()


def _named_files(resolved: dict[str, Any]) -> str:
    """A hash of the contents of the files the scenario names (`topology.file`, a matrix
    workload's `file`); empty when it names none."""
    tables = [resolved.get("topology"), *(resolved.get("workloads") or [])]
    paths = [t["file"] for t in tables if isinstance(t, dict) and isinstance(t.get("file"), str)]
    h = hashlib.sha256()
    for p in paths:
        try:
            h.update(Path(p).read_bytes())
        except OSError:
            h.update(b"unreadable " + p.encode())
    return h.hexdigest()[:16] if paths else ""


class Interrupted(KeyboardInterrupt):
    """Ctrl-C stopped a batch of runs: ``finished`` of ``total`` were done (and are in
    ``cache_dir`` when there is one, so the same call resumes from there)."""

    def __init__(self, finished: int, total: int, cache_dir: Path | None) -> None:
        super().__init__(f"{finished} of {total} runs finished")
        self.finished, self.total, self.cache_dir = finished, total, cache_dir


def _init_worker() -> None:
    """A pool worker ignores SIGINT: on Ctrl-C the main process decides, and stops it."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _run_json(resolved: dict[str, Any]) -> str:
    # A worker imports a Python controller's class by its path (`cc.class`).
    s = copy.deepcopy(resolved)
    python = controller.prepare(s)
    return _core.run_json(to_json(s), controller=python)


def _run_keyed(item: tuple[str, dict[str, Any]]) -> tuple[str, str]:
    return item[0], _run_json(item[1])


def grid(base: dict[str, Any], axes: Mapping[str, Sequence[Any]]) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """Every combination of the axes' values applied to ``base`` (dotted keys, as ``--set``):
    a list of (point's values by key, scenario), in row-major order of ``axes``."""
    out = []
    for values in itertools.product(*axes.values()):
        point = dict(zip(axes, values))
        out.append((point, apply_overrides(copy.deepcopy(base), point)))
    return out


def sweep_table(cells: Sequence[tuple[dict[str, Any], dict[str, Any]]], results: Sequence[Result]) -> pd.DataFrame:
    """One row per run of `grid`'s cells: the point's values (lists and tables as text), beside
    each axis whose values are all quantities of one kind a numeric column in the unit its name
    states (``cc.t_low = "50us"`` gives ``cc.t_low_us = 50.0``; rates in Gbps, sizes in bytes),
    then the run's summary."""
    rows = []
    for (point, _), _r in zip(cells, results):
        rows.append({k: str(v) if isinstance(v, (dict, list)) else v for k, v in point.items()})
    df = pd.DataFrame(rows)
    for key in list(df.columns):
        parsed = [_core.quantity(v) if isinstance(v, str) else None for v in df[key]]
        units = {p[0] for p in parsed if p}
        if len(units) == 1 and all(parsed):
            unit = units.pop()
            df.insert(df.columns.get_loc(key) + 1, f"{key}_{unit}", [p[1] for p in parsed if p])
    summary = pd.DataFrame([r.summary for r in results], index=df.index)
    return pd.concat([df, summary], axis=1)


def run_all(
    scenarios: Sequence[dict[str, Any]],
    *,
    jobs: int | None = None,
    cache_dir: str | Path | None = None,
    scheduler: str | Any | None = None,
    scheduler_timeout: float = 5.0,
    desc: str = "runs",
    progress: bool = True,
    threads: int | None = None,
) -> list[Result]:
    """Runs every scenario (dicts, as `rttlab.load` returns) and returns the results in the same
    order. Locally on ``jobs`` processes (default: all cores), or with ``scheduler`` (a Dask
    scheduler address such as ``"tcp://10.0.0.1:8786"``, or a ``distributed.Client``) on that
    Dask cluster, giving up on connecting after ``scheduler_timeout`` seconds. With ``cache_dir``, results found there are reused and new ones stored as
    they arrive. Identical scenarios run once. Every scenario is validated first: an invalid one
    raises its ``ValueError`` before anything runs. Each run uses ``threads`` threads
    (``run.threads``); by default a run whose scenario leaves it at ``"auto"`` gets one when
    runs go side by side (the cores are taken by the runs), and its own choice when it runs
    alone."""
    if jobs is not None and (not isinstance(jobs, int) or jobs < 1):
        raise ValueError(f"jobs = {jobs!r}: a whole number, 1 or more (or None for every core)")
    if threads is not None and (not isinstance(threads, int) or not 1 <= threads <= 1024):
        raise ValueError(f"threads = {threads!r}: a whole number from 1 to 1024 (or None)")
    resolved = [resolve(s) for s in scenarios]
    keys = [scenario_key(s) for s in resolved]
    cache = prepare_cache(cache_dir) if cache_dir else None
    paths = {k: cache / f"{k}.json" for k in keys} if cache else {}
    texts: dict[str, str] = {}
    todo: dict[str, dict[str, Any]] = {}
    for k, s in zip(keys, resolved):
        if k in texts or k in todo:
            continue
        if k in paths and paths[k].exists():
            texts[k] = paths[k].read_text()
        else:
            todo[k] = s

    bar = tqdm(total=len(texts) + len(todo), initial=len(texts), desc=desc, unit="run", disable=not progress)

    def done(k: str, text: str) -> None:
        if k in paths:
            atomic_write(paths[k], text)
        texts[k] = text
        bar.update()

    jobs = jobs or os.cpu_count() or 1
    side_by_side = scheduler is not None or min(jobs, len(todo)) > 1
    todo = {k: with_threads(s, threads, side_by_side) for k, s in todo.items()}
    try:
        with bar:
            if scheduler is not None:
                _run_on_dask(scheduler, scheduler_timeout, todo, done)
            else:
                _run_local(jobs, todo, done)
    except KeyboardInterrupt:
        raise Interrupted(len(texts), len(set(keys)), cache if cache else None) from None
    parsed = {k: Result.from_json(t) for k, t in texts.items()}
    return [parsed[k] for k in keys]


def with_threads(s: dict[str, Any], threads: int | None, side_by_side: bool) -> dict[str, Any]:
    """``s`` with its ``run.threads`` set to ``threads``, or to 1 if it is ``"auto"`` and runs
    go side by side; unchanged otherwise."""
    run = s.get("run") or {}
    if threads is None and not (side_by_side and run.get("threads", "auto") == "auto"):
        return s
    return {**s, "run": {**run, "threads": threads or 1}}


def _run_local(jobs: int, todo: dict[str, dict[str, Any]], done: Callable[[str, str], None]) -> None:
    """Runs ``todo`` on ``jobs`` local processes (in this one when ``jobs`` is 1). On Ctrl-C
    the workers are terminated at once: a run in progress is not a result."""
    if min(jobs, len(todo)) <= 1:
        for k, s in todo.items():
            done(k, _run_json(s))
        return
    with multiprocessing.Pool(min(jobs, len(todo)), initializer=_init_worker) as pool:
        for k, text in pool.imap_unordered(_run_keyed, todo.items()):
            done(k, text)


def _run_on_dask(
    scheduler: str | Any, timeout_s: float, todo: dict[str, dict[str, Any]], done: Callable[[str, str], None]
) -> None:
    """Runs ``todo`` on a Dask distributed cluster, one task per scenario; the workers need
    rttlab installed (the same version: the cache key names the simulator build)."""
    try:
        from distributed import Client
        from distributed import as_completed as dask_completed
    except ImportError as e:
        raise ValueError(
            "scheduler: running on a Dask cluster needs rttlab's cluster extra (pip install 'rttlab[cluster]')"
        ) from e
    if isinstance(scheduler, Client):
        client = scheduler
    else:
        try:
            client = Client(scheduler, timeout=f"{timeout_s}s")
        except (OSError, TimeoutError, ValueError, TypeError) as e:
            raise ValueError(
                f"scheduler {scheduler}: cannot connect within {timeout_s:g} s ({type(e).__name__}: {str(e).splitlines()[0] if str(e) else 'no detail'})"
            ) from None
    futures = {}
    try:
        futures = {client.submit(_run_json, s, key=f"rttlab-{k}", pure=True): k for k, s in todo.items()}
        for fut in dask_completed(futures):
            done(futures[fut], fut.result())
    except KeyboardInterrupt:
        client.cancel(list(futures))
        raise
    finally:
        if client is not scheduler:
            client.close()
