"""The command line at its edges: bad options get one line naming the option and what is
allowed (exit 2), and Ctrl-C stops any command within a second or two (exit 130), keeping
finished work and writing nothing half-done."""

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import cli_child
from rttlab.cli import main as cli

BASE = ["sweep", "timely-testbed", "--grid", "cc.t_low=10us", "--no-progress", "--no-cache"]


@pytest.mark.parametrize(
    "argv, words",
    [
        ([*BASE, "--out", "x.csv", "--jobs", "-1"], "argument --jobs: -1: must be 1 or more"),
        ([*BASE, "--out", "x.csv", "--jobs", "two"], "argument --jobs: 'two' is not a whole number"),
        ([*BASE, "--out", "x.csv", "--seeds", "a,b"], "argument --seeds: 'a' in 'a,b' is not a whole number"),
        ([*BASE, "--out", "x.csv", "--seeds", "-1"], "a seed is between 0 and 2^64 - 1"),
        ([*BASE, "--out", "x.csv", "--scheduler-timeout", "0"], "argument --scheduler-timeout: 0: must be a positive"),
    ],
)
def test_bad_options_exit_2_naming_the_option(tmp_path, monkeypatch, capsys, argv, words):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as e:
        cli(argv)
    assert e.value.code == 2
    assert words in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "sets, words",
    [
        (["cc.tlow=50us"], "cc.tlow: unknown field `tlow`, expected one of"),
        (["cc.tlow=50us"], "did you mean `t_low`?"),
        (["dration=1ms"], "did you mean `duration`?"),
        (["cc.algorithm=timley"], "did you mean `timely`?"),
        (["duration=10"], "duration: 10 has no unit: a duration is written with one of ps, ns, us, ms, s"),
        (["nic.segment=16000"], "nic.segment: 16000 has no unit: a size"),
        (["duration=1000000000000s"], "'1000000000000s' is too large for a duration: the largest is 18446744s"),
        (["duration=2000000s"], "duration = 2000000s: must be positive and at most 1000000s"),
        (["cc.initial_rate=0bps"], "cc.initial_rate = 0bps: positive"),
    ],
)
def test_bad_keys_and_values_get_one_line_naming_them(capsys, sets, words):
    argv = ["run", "timely-testbed"]
    for s in sets:
        argv += ["--set", s]
    assert cli(argv) == 2
    err = capsys.readouterr().err
    assert words in err, err
    assert len(err.strip().splitlines()) == 1, err


def test_an_unreachable_scheduler_fails_within_its_timeout(tmp_path, capsys):
    t0 = time.monotonic()
    rc = cli([*BASE, "--out", str(tmp_path / "x.csv"), "--scheduler", "tcp://127.0.0.1:1", "--scheduler-timeout", "1"])
    assert rc == 2
    assert time.monotonic() - t0 < 10
    assert "scheduler tcp://127.0.0.1:1: cannot connect within 1 s" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def interrupt(argv: list[str], cwd: Path, ready) -> tuple[int, float, str]:
    """Runs the CLI in a child process, sends it SIGINT once ``ready()`` holds (looked at every
    0.1 s for at most a minute, so that a slow moment of the machine changes nothing) and
    returns its exit code, how long it took to exit after the signal, and its stderr."""
    child = cli_child(argv, cwd=cwd)
    deadline = time.monotonic() + 60
    while not ready() and time.monotonic() < deadline:
        assert child.poll() is None, child.communicate()
        time.sleep(0.1)
    assert child.poll() is None, child.communicate()
    t0 = time.monotonic()
    child.send_signal(signal.SIGINT)
    _, err = child.communicate(timeout=30)
    return child.returncode, time.monotonic() - t0, err


def test_ctrl_c_stops_a_long_run_at_once_and_writes_nothing(tmp_path):
    started = time.monotonic()
    argv = ["run", "timely-clos-rpc", "--set", "duration=100s", "--out", "out"]
    rc, took, err = interrupt(argv, tmp_path, ready=lambda: time.monotonic() - started > 3)
    assert rc == 130, err
    assert took < 2.0, took
    assert err.strip().splitlines()[-1] == "rttlab: interrupted; nothing was written"
    assert list(tmp_path.iterdir()) == []


def test_ctrl_c_stops_a_sweep_keeps_finished_points_and_resumes(tmp_path):
    # Two quick points finish first; the long ones are running when the signal comes.
    argv = [
        "sweep",
        "timely-testbed",
        "--set",
        "warmup=0ms",
        "--grid",
        "duration=1ms,2ms,9s,10s",
        "--jobs",
        "2",
        "--cache",
        "cache",
        "--out",
        "s.csv",
    ]
    cached = tmp_path / "cache"
    rc, took, err = interrupt(argv, tmp_path, ready=lambda: len(list(cached.glob("*.json"))) == 2)
    assert rc == 130, err
    assert took < 2.0, took
    assert "2 of 4 runs had finished and are cached in" in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cache"]
    assert len(list((tmp_path / "cache").glob("*.json"))) == 2
    assert not [p for p in (tmp_path / "cache").iterdir() if p.name.startswith(".")]


def test_the_progress_bar_shows_simulated_time_and_events_per_second(capsys):
    from rttlab.progress import RunProgress

    with RunProgress() as bar:
        assert bar(500_000_000_000, 1_000_000_000_000, 2_000_000) is False
    err = capsys.readouterr().err
    assert "500.0/1000.0 ms simulated" in err and "M events/s" in err, err


def test_no_progress_bar_when_stderr_is_not_a_terminal(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "rttlab.cli", "run", "timely-testbed", "--set", "duration=300ms"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""


def test_a_big_fabrics_summary_shows_the_busiest_ports_with_their_class_and_counts_the_rest(capsys):
    # Every switch port of a k = 8 fat-tree is sampled: hundreds of rows in the ports table.
    argv = ["run", "timely-clos-rpc", "--no-progress", "--set", "duration=1ms", "--set", "warmup=0s"]
    assert cli([*argv, "--set", 'measure.queue_ports=["s*-*"]']) == 0
    out = capsys.readouterr().out
    header = next(line for line in out.splitlines() if "sampled port" in line)
    assert "class" in header
    rows = out.split(header, 1)[1].splitlines()
    shown = [r for r in rows if r.strip().startswith("s") and "-" in r.split()[0]]
    assert len(shown) == 12
    assert "12 busiest of " in out and "more in the ports table" in out
