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
        line = next(l for l in out.splitlines() if l.strip().startswith(name + " "))
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
    (tmp_path / "timely-testbed-pfc.toml").write_text((ROOT / "scenarios" / "timely-testbed-pfc.toml").read_text().replace('seed = 1', 'seed = 7'))
    assert rttlab.load("timely-testbed-pfc.toml")["seed"] == 7
    assert rttlab.load("timely-testbed-pfc")["seed"] == 1
    with pytest.raises(ValueError, match="neither a file nor a preset; presets: .*timely-testbed"):
        rttlab.load("timely-tesbed")
    with pytest.raises(ValueError, match="does not exist"):
        rttlab.load("sub/timely-testbed.toml")
