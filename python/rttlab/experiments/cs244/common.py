"""What the CS244 experiments share: run lengths, the signals compared, percentiles from the
RTT CDF and from queue traces."""

from __future__ import annotations

import numpy as np
import pandas as pd

#: The queue-vector signals CS244'19 §3.2 compares (``cc.signal``), with their labels.
SIGNALS = {"sum": "SUM", "max": "MAX", "sum_squ": "SUM_SQU"}


def cdf_quantile(rtt: pd.DataFrame, q: float) -> float:
    """The ``q`` quantile of an ``rtt`` table (rtt_us, count, cdf)."""
    hit = rtt[rtt.cdf >= q]
    return float(hit.rtt_us.iloc[0]) if len(hit) else float("nan")


def trace_quantile(queues: pd.DataFrame, port: str, q: float) -> float:
    """The ``q`` quantile of port ``port``'s sampled queue (bytes)."""
    return float(np.quantile(queues[queues.port == port].bytes, q))
