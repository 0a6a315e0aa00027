"""What the failure experiments share: the k-ary fat-tree they run on (the multipath
experiments'), and which of its links they fail."""

from __future__ import annotations

import copy
from typing import Any

from ...scenario import set_key
from ..multipath.common import base

#: (k, link rate, warm-up ms, measured ms) of the full and the quick forms.
FULL, QUICK = (8, "100Gbps", 1.0, 9.0), (4, "25Gbps", 0.5, 3.5)


def core_link(k: int) -> str:
    """The first aggregation switch's link to its first core switch: in a k-ary fat-tree the
    edge switches are s0 to s(k²/2 − 1), the aggregation switches the next k²/2, then the cores."""
    return f"s{k * k // 2}-s{k * k}"


def scenario(
    name: str, settings: dict[str, Any], quick: bool, size: tuple[tuple, tuple] = (FULL, QUICK)
) -> dict[str, Any]:
    """A fat-tree run with `settings` (dotted keys to values, copied) set over WebSearch flow
    sizes at 50 % load, every flow kept (`flow_records`); `size`: (full, quick) forms."""
    k, rate, warm, meas = size[quick]
    s = base(name, k, rate, warm, meas)
    s["workloads"] = [{"kind": "flow_sizes", "cdf": "websearch", "load": 0.5}]
    s["measure"] = {"flow_records": True, "fct_buckets": ["10KB", "100KB", "1MB", "10MB"]}
    for key, value in settings.items():
        set_key(s, key, copy.deepcopy(value))
    return s
