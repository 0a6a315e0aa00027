"""The result of a run: a summary dict, pandas DataFrames, and metadata."""

from __future__ import annotations

import html
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .outputs import result_dir

TABLES = (
    "flows",
    "rtt",
    "queues",
    "queue_stats",
    "ports",
    "pfc",
    "timeseries",
    "groups",
    "fct",
    "flow_records",
    "transfers",
    "jobs",
    "steps",
)
#: How `save` writes the tables.
FORMATS = ("csv", "parquet")
#: The summary's keys a `Result` shows first in its short forms.
HEADLINE = ("goodput_gbps", "rtt_p50_us", "rtt_p99_us", "jain", "pauses", "drops")


@dataclass
class Result:
    """``summary``: headline numbers (docs/scenarios.md, "Summary keys"). DataFrames: ``flows``
    (one row per connection), ``rtt`` (the RTT distribution: value, count, CDF), ``queues``
    (sampled queue occupancy, when traced), ``queue_stats``, ``ports`` (per port and class:
    packets, drops, marks, PFC, queue), ``pfc`` (the PFC timeline, when asked), ``timeseries``
    (per connection and instant), ``groups``, ``fct``, ``flow_records`` (when asked). ``meta``:
    the scenario as run with every default, the seed, the rttlab version, and run speed."""

    summary: dict[str, Any]
    meta: dict[str, Any]
    tables: dict[str, pd.DataFrame] = field(repr=False)
    #: Packet captures (``[measure.pcap]``): each captured port's pcap file, by port name.
    pcaps: dict[str, bytes] = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, text: str) -> Result:
        """The result from `_core.run_json`'s text (the run cache's form): each column gets
        the dtype the simulator gives it, so the frames equal `from_native`'s."""
        raw = json.loads(text)
        tables = {
            name: pd.DataFrame(
                {col: pd.Series(values, dtype=raw["dtypes"][name][col]) for col, values in raw["tables"][name].items()}
            )
            for name in TABLES
        }
        return cls(summary=raw["summary"], meta=raw["meta"], tables=tables)

    @classmethod
    def from_native(cls, summary: str, meta: str, tables: dict[str, dict[str, Any]], pcaps: dict[str, bytes]) -> Result:
        """The result from `_core.run`: NumPy arrays taken over from the simulator as the
        columns (no copy); text columns arrive as label codes, integers with gaps with a mask."""
        frames = {
            name: pd.DataFrame({col: _column(v) for col, v in tables[name].items()}, copy=False) for name in TABLES
        }
        return cls(summary=json.loads(summary), meta=json.loads(meta), tables=frames, pcaps=pcaps)

    @property
    def warnings(self) -> list[str]:
        """What makes this run's results doubtful or incomplete, in words: a controller's
        parameter that leaves it unable to act on the scenario's paths (with a value that
        would work), a setting the controller ignores, a limit reached."""
        return list(self.meta.get("warnings", []))

    def __getattr__(self, name: str) -> pd.DataFrame:
        """The tables as attributes: ``result.flows``, ``result.ports``… (typed as DataFrames)."""
        if name in TABLES:
            return self.tables[name]
        raise AttributeError(name)

    def _headline(self) -> str:
        name = self.meta.get("scenario", {}).get("name") or "scenario"
        shown = ", ".join(
            f"{k}={self.summary[k]:.4g}" for k in HEADLINE if isinstance(self.summary.get(k), (int, float))
        )
        return f"{name} (seed {self.meta.get('seed')}): {shown}"

    def __repr__(self) -> str:
        rows = ", ".join(f"{n} {len(self.tables[n])}" for n in TABLES if len(self.tables[n]))
        return f"<rttlab.Result {self._headline()}; tables: {rows}>"

    def _repr_html_(self) -> str:
        """A notebook shows the headline and the summary as a table."""
        summary = pd.Series(self.summary, name="value").to_frame().to_html(na_rep="—")
        rows = ", ".join(f"<code>{n}</code> ({len(self.tables[n])} rows)" for n in TABLES if len(self.tables[n]))
        return f"<p><b>rttlab.Result</b> {html.escape(self._headline())}</p><p>tables: {rows}</p>{summary}"

    def save(self, out: str | Path, *, force: bool = False, format: str = "csv") -> Path:
        """Writes summary.json, meta.json, one file per table (``format``: CSV, or Parquet,
        which keeps the column types) and ``pcap/PORT.pcap`` per packet capture into the
        directory ``out``, all together or not at all. An
        existing ``out`` is replaced only with ``force`` and only if it is an earlier rttlab
        result (see `rttlab.outputs`)."""
        if format not in FORMATS:
            raise ValueError(f"format = {format!r}: one of {', '.join(FORMATS)}")
        with result_dir(out, force=force) as tmp:
            (tmp / "summary.json").write_text(json.dumps(self.summary, indent=2) + "\n")
            (tmp / "meta.json").write_text(json.dumps(self.meta, indent=2) + "\n")
            for name, df in self.tables.items():
                if format == "csv":
                    df.to_csv(tmp / f"{name}.csv", index=False)
                else:
                    df.to_parquet(tmp / f"{name}.parquet", index=False)
            if self.pcaps:
                (tmp / "pcap").mkdir()
                for port, data in self.pcaps.items():
                    (tmp / "pcap" / f"{port}.pcap").write_bytes(data)
        return Path(out)


def _column(v: Any) -> Any:
    """A column of `_core.run`'s tables as pandas takes it: an array as it is, labels as text
    (object dtype: converting a million names to pandas 3's string dtype would cost more than
    the rest together), integers with missing values as a nullable ``Int64`` array."""
    if not isinstance(v, tuple):
        return v
    kind, a, b = v
    if kind == "labels":
        return pd.Series(np.asarray(b, dtype=object)[a] if len(b) else [], dtype=object)
    return pd.arrays.IntegerArray(a, b)
