"""The TIMELY §6.1 testbed every small-scale experiment starts from, the run lengths of full
and ``--quick`` runs, and the testbed's settings that decide a trend.

Testbed (scenarios/timely-testbed.toml): 10 clients x 4 connections -> one server behind two
bonded 10 Gbps ports on one switch, PFC on, TIMELY with the paper's §6 parameters, NIC timestamps,
and an unloaded RTT of 4 µs (1 µs links; the testbed's was about 20 µs, placed where the paper
does not say: the sensitivity tables run it beside).
"""

from __future__ import annotations

from ..common import Plan

#: Full runs: 3 seeds of 3 simulated seconds after a 1 s warm-up. Every connection starts at
#: line rate; the first RTTs cut the rates to the floor, and with 64 KB segments (one completion
#: per 64 KB) the climb back takes a few hundred ms.
FULL = Plan(warmup_ms=1000, measured_ms=3000, seeds=(1, 2, 3))
#: ``--quick`` (CI): one seed of 1 s after a 500 ms warm-up.
QUICK = Plan(warmup_ms=500, measured_ms=1000, seeds=(1,))


#: The testbed's settings (the presets') and the others a sensitivity table runs: label ->
#: overrides.
TESTBED = "presets: 4 µs unloaded, NIC timestamps, bonded server ports"
UNLOADED_20US = "the testbed's 20 µs unloaded (§5), in the links"
SETTINGS: dict[str, dict[str, str]] = {
    TESTBED: {},
    UNLOADED_20US: {"topology.link_delay": "5us"},
    "software timestamps, idle host": {"nic.timestamps": "software"},
    "software timestamps, busy host": {"nic.timestamps": "software", "nic.host_load": "busy"},
}


def with_settings(p: Plan) -> list[tuple[str, dict[str, str], Plan]]:
    """Each of `SETTINGS` with its overrides and run plan: the presets' on every seed of ``p``,
    the others on its first (the sensitivity tables)."""
    return [(s, o, p if s == TESTBED else Plan(p.warmup_ms, p.measured_ms, p.seeds[:1])) for s, o in SETTINGS.items()]


def plan(quick: bool) -> Plan:
    return QUICK if quick else FULL


def run_plan(quick: bool, longest_ms: int = 1000) -> Plan:
    """The plan for experiments that keep a 1 ms time series: measured time capped at
    ``longest_ms`` to bound the series."""
    p = plan(quick)
    return Plan(p.warmup_ms, min(p.measured_ms, longest_ms), p.seeds)
