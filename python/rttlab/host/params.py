"""A scenario's ``[cc]`` as the kernel programs' parameters: which program, which
``tcp_congestion_ops`` it registers, and each parameter in the program's fixed point
(docs/host.md, "Fixed point"), from the same resolved values the simulator runs with.

Weights and factors become Q16 integers (``round(x·2^16)``), windows Q32 packets, times
picoseconds, rates bit/s.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from .. import _core

ONE = 1 << 16
#: Linux's own controllers, run as references beside rttlab's (`cc.algorithm = "linux"`,
#: `cc.name`).
LINUX = ("reno", "cubic", "bbr")


@dataclass(frozen=True)
class Program:
    """Which object (None: a controller of Linux's own), the name setsockopt(TCP_CONGESTION)
    selects (in rttlab's objects also the struct_ops map's), and the parameters."""

    obj: str | None
    kernel_name: str
    params: dict[str, int]
    #: The simulator's transport it stands for: "message" (rate-based, TSO bursts as segments)
    #: or "window".
    transport: str


def q16(x: float) -> int:
    return round(x * ONE)


def ps(value: str | None) -> int:
    """A resolved duration as picoseconds."""
    unit, n = _core.base_units(str(value))
    assert unit == "ps", value
    return n


def bps(value: str | None) -> int:
    unit, n = _core.base_units(str(value))
    assert unit == "bps", value
    return n


def size(value: str | None) -> int:
    unit, n = _core.base_units(str(value))
    assert unit == "bytes", value
    return n


def _timely_common(scenario: dict[str, Any], line_rate_bps: int, mss: int) -> dict[str, int]:
    """The parameters TIMELY and Patched TIMELY share."""
    cc, nic = scenario["cc"], scenario["nic"]
    if cc.get("signal", "rtt") != "rtt":
        raise ValueError(f'cc.signal = {cc["signal"]!r}: the kernel has no in-band telemetry; only "rtt"')
    max_rate = min(bps(cc["max_rate"]), line_rate_bps) if cc.get("max_rate") else line_rate_bps
    initial = min(bps(cc["initial_rate"]), max_rate) if cc.get("initial_rate") else max_rate
    segment = size(nic["segment"]) if nic.get("segment") else 16 * 1024
    outstanding = size(nic["max_outstanding"]) if nic.get("max_outstanding") else 4 * segment
    return {
        "alpha_q16": q16(cc["alpha"]),
        "beta_q16": q16(cc["beta"]),
        "delta_bps": bps(cc["delta"]),
        "t_low_ps": ps(cc["t_low"]),
        "t_high_ps": ps(cc["t_high"]),
        "min_rtt_ps": ps(cc["min_rtt"]),
        "max_rate_bps": max_rate,
        "min_rate_bps": bps(cc["min_rate"]),
        "initial_rate_bps": initial,
        "update_scaling": ["all", "snippet", "none"].index(cc["update_scaling"]),
        "cwnd_packets": math.ceil(outstanding / mss),
        "tso_segs": max(1, round(segment / mss)),
        # The segment's serialization at the line rate, subtracted from each RTT (§3.1).
        "seg_ser_ps": round(segment * 8 * 10**12 / line_rate_bps),
    }


def _timely(scenario: dict[str, Any], line_rate_bps: int, mss: int) -> Program:
    cc = scenario["cc"]
    params = {
        **_timely_common(scenario, line_rate_bps, mss),
        "hai_threshold": cc["hai_threshold"],
        "hai_factor_q16": q16(cc["hai_factor"]),
        "hai_counter": ["gradient", "raw_diff", "any_increase"].index(cc["hai_counter"]),
        "decrease_floor": ["none", "half"].index(cc["decrease_floor"]),
        "zero_gradient": ["increase", "hold"].index(cc["zero_gradient"]),
    }
    return Program("timely", "rttlab_timely", params, "message")


def _patched_timely(scenario: dict[str, Any], line_rate_bps: int, mss: int) -> Program:
    cc = scenario["cc"]
    params = {**_timely_common(scenario, line_rate_bps, mss), "rtt_ref_ps": ps(cc["rtt_ref"] or cc["t_low"])}
    return Program("timely", "rttlab_ptimely", params, "message")


def _swift(scenario: dict[str, Any], line_rate_bps: int, mss: int) -> Program:
    cc = scenario["cc"]
    fs_min, fs_max, fs_range = cc["fs_min_cwnd"], cc["fs_max_cwnd"], ps(cc["fs_range"])
    fs_alpha = fs_range / (1 / math.sqrt(fs_min) - 1 / math.sqrt(fs_max))
    params = {
        "ai_q16": q16(cc["ai"]),
        "beta_q16": q16(cc["beta"]),
        "max_mdf_q16": q16(cc["max_mdf"]),
        "base_target_ps": ps(cc["base_target"]),
        "per_hop_ps": ps(cc["per_hop"]),
        # The star's one switch.
        "hops": 1,
        "topology_scaling": int(cc["topology_scaling"]),
        "flow_scaling": int(cc["flow_scaling"]),
        "fs_range_ps": fs_range,
        "fs_alpha_ps": round(fs_alpha),
        "fs_offset_ps": round(fs_alpha / math.sqrt(fs_max)),
        "min_cwnd_q32": round(cc["min_cwnd"] * 2**32),
        "max_cwnd_q32": round(cc["max_cwnd"] * 2**32),
        "initial_cwnd_q32": round(cc["initial_cwnd"] * 2**32),
        "retx_reset_threshold": cc["retx_reset_threshold"],
        "rtt_smoothing_q16": q16(cc["rtt_smoothing"]),
        "guard_rtt": ["sample", "smoothed"].index(cc["guard_rtt"]),
    }
    return Program("swift", "rttlab_swift", params, "window")


def _dctcp(scenario: dict[str, Any], line_rate_bps: int, mss: int) -> Program:
    cc = scenario["cc"]
    params = {
        "g_q16": q16(cc["g"]),
        "initial_alpha_q16": q16(cc["initial_alpha"]),
        "init_cwnd": cc["init_cwnd"],
        "min_cwnd": cc["min_cwnd"],
    }
    return Program("dctcp", "rttlab_dctcp", params, "window")


def _linux(scenario: dict[str, Any], line_rate_bps: int, mss: int) -> Program:
    return Program(None, scenario["cc"]["name"], {}, "window")


#: The kernel program of each `cc.algorithm` the real host runs, as the simulator's registry
#: lists its controllers.
PROGRAMS = {
    "timely": _timely,
    "patched_timely": _patched_timely,
    "swift": _swift,
    "dctcp": _dctcp,
    "linux": _linux,
}

#: What each object's logged decision (`value`, `aux`) reads as, by result column: a rate
#: program's rate, Swift's fabric window (Q32 packets), DCTCP's window and α (Q16), and the
#: window of Linux's own (object None).
READINGS = {
    "timely": {"cc_rate_gbps": lambda value, aux: value / 1e9},
    "swift": {"fcwnd_pkts": lambda value, aux: value / 2**32},
    "dctcp": {"cwnd_pkts": lambda value, aux: value, "dctcp_alpha": lambda value, aux: aux / 65536},
    None: {"cwnd_pkts": lambda value, aux: value},
}


def program(scenario: dict[str, Any], line_rate_bps: int, mss: int) -> Program:
    """The kernel program for the resolved scenario's ``[cc]``; ``line_rate_bps`` is the
    senders' link rate and ``mss`` the payload of one packet. An algorithm the kernel does not
    have here raises ``ValueError`` naming it."""
    algorithm = scenario["cc"]["algorithm"]
    if algorithm not in PROGRAMS:
        ours = ", ".join(a for a in PROGRAMS if a != "linux")
        raise ValueError(
            f'cc.algorithm = {algorithm!r}: the real host runs {ours}, or Linux\'s own (cc.algorithm = "linux", cc.name = {" / ".join(repr(n) for n in LINUX)})'
        )
    return PROGRAMS[algorithm](scenario, line_rate_bps, mss)
