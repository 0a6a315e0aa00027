"""The reproduction report: one HTML page, one section per experiment (what the paper shows, our
figure, our numbers beside the paper's, the paper's trends checked, and a paragraph on agreement),
with every plotted series as CSV and every scenario run as re-runnable TOML beside it.

Layout of the output directory::

    index.html                 self-contained (figures embedded), opens without a network
    figures/NAME.png, .pdf     each figure, PDF for a paper
    data/NAME-SERIES.csv       every plotted series, tidy
    data/NAME-table.csv        our numbers beside the paper's
    data/checks.csv            every trend checked: experiment, claim, holds, measured
    scenarios/NAME/POINT.toml  every run (`rttlab run scenarios/NAME/POINT.toml` re-runs it)
"""

from __future__ import annotations

import base64
import math
import subprocess
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd
from jinja2 import Environment, PackageLoader

from . import __version__
from .experiments import Executed
from .outputs import result_dir
from .plotting import save
from .scenario import to_toml

#: The page's template (templates/report.html.j2); values are escaped as HTML.
TEMPLATES = Environment(loader=PackageLoader("rttlab", "templates"), autoescape=True, trim_blocks=False)


def _fmt(x: Any) -> str:
    """A number with three significant digits, no exponent: 4.73, 59.8, 598, 1060; "–" if none."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    if isinstance(x, float):
        decimals = max(0, 2 - math.floor(math.log10(abs(x)))) if x else 0
        return f"{x:.{decimals}f}"
    return str(x)


def _rows(t: pd.DataFrame) -> list[dict[str, str]]:
    """The table of our numbers beside the paper's, formatted, with their ratio."""
    rows = []
    for r in t.itertuples():
        paper = None if r.paper is None or pd.isna(r.paper) else float(r.paper)
        ours = None if r.rttlab is None or pd.isna(r.rttlab) else float(r.rttlab)
        ratio = ours / paper if ours is not None and paper else None
        rows.append(
            {"quantity": r.quantity, "unit": r.unit, "rttlab": _fmt(ours), "paper": _fmt(paper), "ratio": _fmt(ratio)}
        )
    return rows


def _notes(runs: list) -> list[tuple[str, int]]:
    """Each distinct warning of the section's runs (a knob that did nothing, a limit reached),
    with how many runs gave it."""
    counts: dict[str, int] = {}
    for r in runs:
        for w in r.result.meta.get("warnings", []):
            counts[w] = counts.get(w, 0) + 1
    return sorted(counts.items())


def _git_revision() -> str | None:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=Path(__file__).parent,
            capture_output=True,
            text=True,
            timeout=5,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None


def write(out: str | Path, executed: list[Executed], *, title: str, quick: bool, force: bool = False) -> Path:
    """Writes the report for ``executed`` experiments into ``out``, all together or not at all;
    an existing ``out`` is replaced only with ``force`` (see `rttlab.outputs`)."""
    sections, checks = [], []
    with result_dir(out, force=force) as tmp:
        for d in ("figures", "data", "scenarios"):
            (tmp / d).mkdir()
        for ex in executed:
            e, o = ex.experiment, ex.outcome
            width_pct = min(100, round(o.figure.get_size_inches()[0] / 7.0 * 100))
            save(o.figure, tmp / "figures" / e.name)
            o.table.to_csv(tmp / "data" / f"{e.name}-table.csv", index=False)
            links = [("table", f"data/{e.name}-table.csv")]
            for key, frame in o.data.items():
                frame.to_csv(tmp / "data" / f"{e.name}-{key}.csv", index=False)
                links.append((key, f"data/{e.name}-{key}.csv"))
            sdir = tmp / "scenarios" / e.name
            sdir.mkdir()
            for r in ex.runs:
                (sdir / f"{r.slug()}.toml").write_text(to_toml(r.result.meta["scenario"]))
            for c in o.checks:
                checks.append({"experiment": e.name, "claim": c.claim, "holds": c.holds, "measured": c.measured})
            sections.append(
                {
                    "name": e.name,
                    "title": e.title,
                    "paper": e.paper,
                    "reference": e.reference,
                    "width_pct": width_pct,
                    "png": base64.b64encode((tmp / "figures" / f"{e.name}.png").read_bytes()).decode(),
                    "table": _rows(o.table),
                    "checks": o.checks,
                    "held": sum(c.holds for c in o.checks),
                    "discussion": o.discussion,
                    "notes": _notes(ex.runs),
                    "links": links,
                    "runs": len(ex.runs),
                    "first_scenario": to_toml(ex.runs[0].result.meta["scenario"]) if ex.runs else "",
                }
            )
        pd.DataFrame(checks, columns=["experiment", "claim", "holds", "measured"]).to_csv(
            tmp / "data" / "checks.csv", index=False
        )
        page = TEMPLATES.get_template("report.html.j2").render(
            title=title,
            version=__version__,
            revision=_git_revision(),
            mode="quick (CI-length runs: one seed, short)" if quick else "full",
            generated=datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
            held=sum(c["holds"] for c in checks),
            checks=len(checks),
            sections=sections,
        )
        (tmp / "index.html").write_text(page)
    return Path(out)
