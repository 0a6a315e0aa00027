"""Helpers shared by the report tests."""

import pandas as pd


def holds(checks: pd.DataFrame, experiment: str, claim_start: str) -> bool:
    """Whether the one stated trend of ``experiment`` whose claim starts with ``claim_start`` holds."""
    rows = checks[(checks.experiment == experiment) & checks.claim.str.startswith(claim_start)]
    assert len(rows) == 1, (experiment, claim_start, list(checks[checks.experiment == experiment].claim))
    return bool(rows.holds.iloc[0])
