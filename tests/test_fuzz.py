"""Property tests of the command line (hypothesis): mutated scenario files and generated
argument lists end in exit 0, or exit 2 with one line naming the problem; never a traceback,
an internal error or a silent failure.

Runs are cut short after a fraction of a second of wall time (a mutated scenario may be valid
and long): what is checked is that nothing crashes, not what the run computes. `make fuzz`
runs many more examples (RTTLAB_FUZZ_EXAMPLES) from a random seed.
"""

import os
import re
import time

import pytest
import rttlab
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rttlab import presets
from rttlab.cli import main as cli

EXAMPLES = int(os.environ.get("RTTLAB_FUZZ_EXAMPLES", "100"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    derandomize="RTTLAB_FUZZ_EXAMPLES" not in os.environ,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

PRESETS = presets.names()
#: Values of every kind, including ones TOML or JSON cannot carry into a scenario.
TOKENS = [
    "0",
    "-1",
    "1",
    "3",
    "4294967296",
    "18446744073709551616",
    "1e999",
    "-1e999",
    "nan",
    "inf",
    "0.5",
    "true",
    '"x"',
    '""',
    '"0ps"',
    '"1ps"',
    '"18446744s"',
    '"0B"',
    '"1TB"',
    '"0bps"',
    '"1bps"',
    '"5"',
    "[]",
    "{}",
    '[1, "a"]',
    "1979-05-27T07:32:00Z",
    "07:32:00",
    '"\\u0000"',
    "[[[[1]]]]",
    '"0-3"',
    '"3-1"',
]
#: One line naming the problem: our own errors, or argparse's usage errors.
ONE_LINE = re.compile(r"^rttlab( [a-z]+)?: error: \S.*$")


class Stop(BaseException):
    """A run cut short by the test (not an outcome the CLI handles)."""


@pytest.fixture
def short_runs(monkeypatch):
    """Runs (`_core.run` and `_core.run_json`) stop after about 0.3 s of wall time, raising
    `Stop`."""

    def cut(run):
        def short(text, observe=None, controller=None):
            t0 = time.monotonic()
            try:
                return run(text, lambda *_: time.monotonic() - t0 > 0.3, controller)
            except KeyboardInterrupt:
                raise Stop from None

        return short

    for name in ("run", "run_json"):
        monkeypatch.setattr(rttlab._core, name, cut(getattr(rttlab._core, name)))


def outcome(argv, capsys):
    """Runs the CLI in this process: (exit code, stderr), or None when the test cut the run."""
    try:
        rc = cli(argv)
    except SystemExit as e:
        rc = e.code
    except Stop:
        return None
    return rc, capsys.readouterr().err


def check(result, argv):
    if result is None:
        return
    rc, err = result
    assert rc in (0, 2), (rc, argv, err)
    if rc == 2:
        lines = [line for line in err.splitlines() if line.strip()]
        assert len(lines) == 1 and ONE_LINE.match(lines[0]), (argv, err)


@st.composite
def mutated_scenario(draw):
    """A shipped scenario's TOML with one to three edits: a value replaced, a line deleted or
    repeated, a key misspelled, a line of garbage, or the text cut short."""
    lines = presets.text(draw(st.sampled_from(PRESETS))).splitlines()
    for _ in range(draw(st.integers(1, 3))):
        if not lines:
            break
        i = draw(st.integers(0, len(lines) - 1))
        op = draw(st.sampled_from(["value", "value", "value", "delete", "repeat", "key", "garbage", "cut"]))
        key, eq, _ = lines[i].partition("=")
        if op == "value" and eq:
            lines[i] = f"{key}= {draw(st.sampled_from(TOKENS))}"
        elif op == "delete":
            del lines[i]
        elif op == "repeat":
            lines.insert(i, lines[i])
        elif op == "key" and eq and len(key.strip()) > 1:
            k = key.strip()
            j = draw(st.integers(0, len(k) - 1))
            lines[i] = f"{k[:j]}{k[j + 1 :]} ={lines[i].partition('=')[2]}"
        elif op == "garbage":
            lines[i] = draw(st.text(max_size=20))
        elif op == "cut":
            lines = lines[:i]
    return "\n".join(lines)


@FUZZ
@given(text=mutated_scenario())
def test_mutated_scenario_files_run_or_exit_2_with_one_line(tmp_path, capsys, short_runs, text):
    path = tmp_path / "s.toml"
    path.write_text(text)
    argv = ["run", str(path), "--json", "--no-progress"]
    check(outcome(argv, capsys), argv)


KEYS = [
    "duration",
    "warmup",
    "seed",
    "cc.algorithm",
    "cc.t_low",
    "cc.beta",
    "nic.segment",
    "nic.mtu",
    "topology.k",
    "topology.hosts",
    "switch.pfc",
    "flows.0.src",
    "workloads.0.rate",
    "measure.queue_interval",
    "cc",
    "x.y",
    ".",
    "",
]


@st.composite
def argument_list(draw, tmp):
    """A command line from rttlab's vocabulary, with values of every kind."""
    value = st.one_of(st.sampled_from(TOKENS).map(lambda t: t.strip('"')), st.text(max_size=8))
    command = draw(st.sampled_from(["run", "sweep", "reproduce", "list", "bogus"]))
    argv = [command]
    if command in ("run", "sweep"):
        argv.append(draw(st.sampled_from([*PRESETS, "no-such-preset", str(tmp / "missing.toml"), str(tmp)])))
    elif command == "reproduce":
        argv.append(draw(st.sampled_from(["timely", "fig13", "no-such-experiment"])))
    for _ in range(draw(st.integers(0, 4))):
        opt = draw(
            st.sampled_from(
                [
                    "--set",
                    "--grid",
                    "--seed",
                    "--seeds",
                    "--jobs",
                    "--out",
                    "--force",
                    "--json",
                    "--cache",
                    "--scheduler-timeout",
                    "--quick",
                    "--bogus",
                ]
            )
        )
        argv.append(opt)
        if opt in ("--set", "--grid"):
            argv.append(f"{draw(st.sampled_from(KEYS))}={draw(value)}")
        elif opt == "--out":
            argv.append(
                str(tmp / draw(st.sampled_from(["o", "o.csv", "o.parquet", "o.txt", ".", "missing/dir/o.csv"])))
            )
        elif opt == "--cache":
            argv.append(str(tmp / "cache"))
        elif opt not in ("--force", "--json", "--quick"):
            argv.append(draw(value))
    if command in ("sweep", "reproduce"):
        argv += ["--jobs", "1", "--no-cache"]
    if command != "list":
        argv.append("--no-progress")
    return argv


@FUZZ
@given(data=st.data())
def test_generated_command_lines_run_or_exit_2_with_one_line(tmp_path, capsys, short_runs, data):
    argv = data.draw(argument_list(tmp_path))
    check(outcome(argv, capsys), argv)
