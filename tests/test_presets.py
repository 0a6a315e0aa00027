"""Scenario presets ship as package data: found by name from any directory, listed with their
descriptions, and a file of the same name wins."""

from pathlib import Path

import pytest
import rttlab
from rttlab import presets
from rttlab.cli import main as cli

ROOT = Path(__file__).resolve().parents[1]


def test_every_shipped_scenario_is_a_preset_with_a_description(capsys):
    files = sorted(p.stem for p in (ROOT / "scenarios").glob("*.toml"))
    assert presets.names() == files and "timely-testbed" in files
    assert cli(["list", "--scenarios"]) == 0
    out = capsys.readouterr().out
    for name in files:
        line = next(row for row in out.splitlines() if row.strip().startswith(name + " "))
        assert len(line.split(None, 1)[1]) > 20, line
    assert presets.description("timely-testbed").startswith("TIMELY §6.1 small-scale incast")


def test_a_preset_runs_by_name_from_any_directory(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    short = {"duration": "3ms", "warmup": "1ms"}
    by_name = rttlab.run("timely-testbed-pfc", overrides=short)
    by_path = rttlab.run(ROOT / "scenarios" / "timely-testbed-pfc.toml", overrides=short)
    assert by_name.summary == by_path.summary
    assert cli(["run", "timely-testbed-pfc.toml", "--set", "duration=3ms", "--set", "warmup=1ms", "--json"]) == 0


def test_a_file_of_the_same_name_wins_and_unknown_names_list_the_presets(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "timely-testbed-pfc.toml").write_text(
        (ROOT / "scenarios" / "timely-testbed-pfc.toml").read_text().replace("seed = 1", "seed = 7")
    )
    assert rttlab.load("timely-testbed-pfc.toml")["seed"] == 7
    assert rttlab.load("timely-testbed-pfc")["seed"] == 1
    with pytest.raises(ValueError, match=r"neither a file nor a preset; presets: .*timely-testbed"):
        rttlab.load("timely-tesbed")
    with pytest.raises(ValueError, match="does not exist"):
        rttlab.load("sub/timely-testbed.toml")


def test_vegas_runs_on_the_window_transport_and_is_refused_on_the_message_one(capsys):
    r = rttlab.run("vegas-dumbbell", overrides={"duration": "30ms", "warmup": "10ms"})
    cc = r.meta["scenario"]["cc"]
    assert cc == {
        "algorithm": "vegas",
        "alpha": 1.0,
        "beta": 3.0,
        "gamma": 1.0,
        "diff_denominator": "rtt",
        "init_cwnd": 10,
        "min_cwnd": 2,
        # What every connection does whatever its controller: no PLB, each sample as it comes.
        "plb": None,
        "feedback": "latest",
        "feedback_samples": 5,
    }
    assert r.summary["throughput_gbps"] > 9.5 and 2 * 1.5 <= r.summary["queue_avg_kb"] <= 6 * 1.5
    assert cli(["run", "timely-testbed", "--set", "cc.algorithm=vegas"]) == 2
    err = capsys.readouterr().err
    assert (
        "cc.algorithm = vegas" in err and "vegas is a window controller" in err and 'transport.kind = "window"' in err
    )
    assert err.count("\n") == 1
