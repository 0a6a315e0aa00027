"""Helpers shared by the tests."""

import signal
import subprocess
import sys

import pandas as pd


def cli_child(argv: list[str], **kwargs) -> subprocess.Popen:
    """``rttlab ARGV`` in a child process with its output piped, answering SIGINT as a command
    run from a terminal does: a child of a background job (CI may run the tests as one) would
    otherwise inherit SIGINT ignored."""
    return subprocess.Popen(
        [sys.executable, "-m", "rttlab.cli", *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        **kwargs,
    )


def holds(checks: pd.DataFrame, experiment: str, claim_start: str) -> bool:
    """Whether the one stated trend of ``experiment`` whose claim starts with ``claim_start`` holds."""
    rows = checks[(checks.experiment == experiment) & checks.claim.str.startswith(claim_start)]
    assert len(rows) == 1, (experiment, claim_start, list(checks[checks.experiment == experiment].claim))
    return bool(rows.holds.iloc[0])
