"""The result of a run: a summary dict, pandas DataFrames, and metadata."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

import pandas as pd

TABLES = ("flows", "rtt", "queues", "queue_stats", "ports", "timeseries", "groups", "fct", "flow_records")


@dataclass
class Result:
    """``summary``: headline numbers (see docs/summary.md for the keys). DataFrames: ``flows``
    (one row per connection), ``rtt`` (the RTT distribution: value, count, CDF), ``queues``
    (sampled queue occupancy, when traced), ``queue_stats``, ``ports`` (per-port bytes and PFC
    counters), ``timeseries`` (per-connection delivered bytes and rate). ``meta``: the scenario as
    run with every default, the seed, the rttlab version, and run speed."""

    summary: dict[str, Any]
    meta: dict[str, Any]
    tables: dict[str, pd.DataFrame] = field(repr=False)

    @classmethod
    def from_json(cls, text: str) -> "Result":
        raw = json.loads(text)
        tables = {name: pd.DataFrame(raw["tables"][name]) for name in TABLES}
        return cls(summary=raw["summary"], meta=raw["meta"], tables=tables)

    def __getattr__(self, name: str) -> pd.DataFrame:
        if name in TABLES:
            return self.tables[name]
        raise AttributeError(name)

    def save(self, out: str | Path) -> Path:
        """Writes summary.json, meta.json and one CSV per table into ``out``, all together or
        not at all (see `atomic_dir`)."""
        with atomic_dir(out) as tmp:
            (tmp / "summary.json").write_text(json.dumps(self.summary, indent=2) + "\n")
            (tmp / "meta.json").write_text(json.dumps(self.meta, indent=2) + "\n")
            for name, df in self.tables.items():
                df.to_csv(tmp / f"{name}.csv", index=False)
        return Path(out)


@contextmanager
def atomic_dir(out: str | Path) -> Iterator[Path]:
    """Yields a temporary directory beside ``out`` to fill; on success it replaces ``out``, on
    error it is removed, so a reader never sees a half-written result."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        yield tmp
        if out.exists():
            shutil.rmtree(out)
        os.replace(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def atomic_write(path: str | Path, text: str) -> None:
    """Writes ``text`` to ``path`` through a temporary file renamed into place."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.replace(tmp, path)
