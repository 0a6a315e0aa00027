"""`rttlab reproduce cs244 --quick`: the CS244 reproductions and HPCC render a report with data
and scenarios for every section, and the HPCC claims hold on the 100 Gbps incast."""

from rttlab.cli import main as cli


def test_reproduce_cs244_quick_writes_every_section(tmp_path, capsys):
    out = tmp_path / "r"
    assert cli(["reproduce", "cs244", "--quick", "--no-cache", "--no-progress", "--out", str(out)]) == 0
    html = (out / "index.html").read_text()
    for section in ["cs244-noise", "cs244-skinny", "cs244-clos", "cs244-star", "cs244-hpcc"]:
        assert section in html
    data = {p.name for p in (out / "data").iterdir()}
    for name in [
        "cs244-noise-rtt_cdf.csv",
        "cs244-skinny-primary.csv",
        "cs244-clos-fct.csv",
        "cs244-star-star.csv",
        "cs244-hpcc-hpcc.csv",
    ]:
        assert name in data, sorted(data)
    scenarios = list((out / "scenarios").rglob("*"))
    assert any("skinny" in p.name for p in scenarios) and any("clos" in p.name for p in scenarios)
    text = capsys.readouterr().out
    # HPCC on the 100 Gbps incast: its three claims hold even in the quick run.
    for claim in [
        "HPCC delivers at least 95 Gbps of wire into host 0 (η = 95 %)",
        "no PFC pause once the first bursts",
        "far below PFC's",
    ]:
        line = next(row for row in text.splitlines() if claim in row)
        assert line.strip().startswith("✔"), line
