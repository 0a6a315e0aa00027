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
import html
import math
import subprocess
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pandas as pd

from . import __version__
from .experiments import Executed
from .plotting import save
from .outputs import result_dir
from .scenario import to_toml

CSS = """
body { font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #222;
       max-width: 60rem; margin: 2rem auto; padding: 0 1.2rem; }
h1 { font-size: 1.6rem; margin-bottom: .2rem; } h2 { font-size: 1.25rem; margin-top: 2.6rem;
     border-top: 1px solid #ddd; padding-top: 1.2rem; }
.meta { color: #555; font-size: .9rem; }
figure { margin: 1rem 0; } figure img { height: auto; border: 1px solid #eee; }
table { border-collapse: collapse; font-size: .88rem; margin: .6rem 0; }
th, td { padding: .25rem .6rem; border-bottom: 1px solid #e4e4e4; text-align: right; }
th:first-child, td:first-child { text-align: left; } th { background: #f6f6f6; }
.ok { color: #1a7f37; font-weight: 600; } .no { color: #b42318; font-weight: 600; }
ul.checks { list-style: none; padding-left: 0; } ul.checks li { margin: .2rem 0; }
.paper { background: #f7f7fb; border-left: 3px solid #8a8fd8; padding: .5rem .8rem; }
details pre { font-size: .78rem; background: #fafafa; padding: .6rem; overflow-x: auto; }
a { color: #0b5cad; }
"""


def _fmt(x: Any) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    if isinstance(x, float):
        return f"{x:.3f}" if abs(x) < 10 else f"{x:.1f}" if abs(x) < 1000 else f"{x:.0f}"
    return html.escape(str(x))


def _table(t: pd.DataFrame) -> str:
    rows = ["<tr><th>quantity</th><th>unit</th><th>rttlab</th><th>paper</th><th>ratio</th></tr>"]
    for r in t.itertuples():
        paper = None if r.paper is None or pd.isna(r.paper) else float(r.paper)
        ours = None if r.rttlab is None or pd.isna(r.rttlab) else float(r.rttlab)
        ratio = ours / paper if ours is not None and paper else None
        rows.append(f"<tr><td>{html.escape(r.quantity)}</td><td>{html.escape(r.unit)}</td><td>{_fmt(ours)}</td><td>{_fmt(paper)}</td><td>{_fmt(ratio)}</td></tr>")
    return "<table>" + "".join(rows) + "</table>"


def _git_revision() -> str | None:
    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=Path(__file__).parent, capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None


def write(out: str | Path, executed: list[Executed], *, title: str, quick: bool, force: bool = False) -> Path:
    """Writes the report for ``executed`` experiments into ``out``, all together or not at all;
    an existing ``out`` is replaced only with ``force`` (see `rttlab.outputs`)."""
    sections, checks, toc = [], [], []
    with result_dir(out, force=force) as tmp:
        for d in ("figures", "data", "scenarios"):
            (tmp / d).mkdir()
        for ex in executed:
            e, o = ex.experiment, ex.outcome
            width_pct = min(100, round(o.figure.get_size_inches()[0] / 7.0 * 100))
            save(o.figure, tmp / "figures" / e.name)
            o.table.to_csv(tmp / "data" / f"{e.name}-table.csv", index=False)
            links = [f'<a href="data/{e.name}-table.csv">table</a>']
            for key, frame in o.data.items():
                frame.to_csv(tmp / "data" / f"{e.name}-{key}.csv", index=False)
                links.append(f'<a href="data/{e.name}-{key}.csv">{html.escape(key)}</a>')
            sdir = tmp / "scenarios" / e.name
            sdir.mkdir()
            for r in ex.runs:
                (sdir / f"{r.slug()}.toml").write_text(to_toml(r.result.meta["scenario"]))
            for c in o.checks:
                checks.append({"experiment": e.name, "claim": c.claim, "holds": c.holds, "measured": c.measured})
            held = sum(c.holds for c in o.checks)
            items = "".join(
                f'<li><span class="{"ok" if c.holds else "no"}">{"✔" if c.holds else "✘"}</span> {html.escape(c.claim)} — <span class="meta">{html.escape(c.measured)}</span></li>'
                for c in o.checks
            )
            png = base64.b64encode((tmp / "figures" / f"{e.name}.png").read_bytes()).decode()
            first = to_toml(ex.runs[0].result.meta["scenario"]) if ex.runs else ""
            toc.append(f'<tr><td><a href="#{e.name}">{html.escape(e.title)}</a></td><td>{held} / {len(o.checks)}</td><td>{len(ex.runs)}</td></tr>')
            sections.append(
                f"""<section id="{e.name}">
<h2>{html.escape(e.title)}</h2>
<p class="paper"><b>The paper:</b> {html.escape(e.paper)}</p>
<figure><img style="width: {width_pct}%" alt="{html.escape(e.title)}" src="data:image/png;base64,{png}">
<figcaption class="meta">rttlab, {html.escape(e.name)} (<a href="figures/{e.name}.pdf">PDF</a>, <a href="figures/{e.name}.png">PNG</a>).</figcaption></figure>
{_table(o.table)}
<p><b>Trends the paper states</b> ({held} of {len(o.checks)} hold):</p>
<ul class="checks">{items}</ul>
<p><b>Agreement.</b> {html.escape(o.discussion)}</p>
<p class="meta">Data: {", ".join(links)}. Scenarios: <a href="scenarios/{e.name}/">{len(ex.runs)} runs</a>, each re-runnable with <code>rttlab run scenarios/{e.name}/POINT.toml</code>.</p>
<details><summary class="meta">Scenario of the first run</summary><pre>{html.escape(first)}</pre></details>
</section>"""
            )
        pd.DataFrame(checks, columns=["experiment", "claim", "holds", "measured"]).to_csv(tmp / "data" / "checks.csv", index=False)
        rev = _git_revision()
        total = sum(c["holds"] for c in checks)
        when = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
        mode = "quick (CI-length runs: one seed, short)" if quick else "full"
        page = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{html.escape(title)}</title><style>{CSS}</style></head>
<body>
<h1>{html.escape(title)}</h1>
<p class="meta">rttlab {__version__}{f" (git {rev})" if rev else ""} · {mode} run · generated {when} · {total} of {len(checks)} stated trends hold</p>
<p>Each section shows what the paper reports, rttlab's figure, rttlab's numbers beside the paper's where the
paper gives numbers, the paper's stated trends checked against what rttlab measured, and why the two agree or
differ. Every plotted series is in <a href="data/">data/</a>; every run's scenario, with all defaults written out,
is in <a href="scenarios/">scenarios/</a>.</p>
<table><tr><th>experiment</th><th>trends hold</th><th>runs</th></tr>{"".join(toc)}</table>
{"".join(sections)}
</body></html>
"""
        (tmp / "index.html").write_text(page)
    return Path(out)
