"""TIMELY's decrease bound (cc.decrease_floor) and who sits on the 10 Mbps floor, on the §6.1
testbed with α = 0.875, where single gradient samples exceed 1/β (docs/model.md)."""

from __future__ import annotations

import rttlab


def run(floor: str) -> rttlab.Result:
    return rttlab.run(
        "timely-testbed",
        overrides={
            "duration": "60ms",
            "warmup": "20ms",
            "cc.alpha": 0.875,
            "cc.decrease_floor": floor,
            "measure.timeseries_interval": "1ms",
        },
    )


def test_without_the_bound_connections_fall_to_the_floor_and_the_tables_say_which():
    unbounded, halved = run("none"), run("half")
    # Connections come and go at the floor: most reach it at some sample (which of them sit
    # there at the run's last instant depends on the seed and on the order of simultaneous
    # events, so that instant is only checked for agreement between the tables).
    ts = unbounded.timeseries
    assert ts.groupby("flow").at_min_rate.max().sum() >= 3
    n = unbounded.summary["flows_at_min_rate"]
    assert unbounded.flows.at_min_rate.sum() == n
    at_end = ts[ts.time_us == ts.time_us.max()]
    assert at_end.at_min_rate.sum() == n
    assert (unbounded.flows[unbounded.flows.at_min_rate == 1].cc_rate_gbps <= 0.0100001).all()
    # The authors' bound keeps every connection off the floor, the link busier and the shares
    # fairer.
    assert halved.timeseries.at_min_rate.sum() == 0
    assert halved.summary["throughput_gbps"] > 1.3 * unbounded.summary["throughput_gbps"]
    assert halved.summary["jain"] > unbounded.summary["jain"] + 0.1


def test_controllers_without_a_floor_report_none():
    r = rttlab.run("timely-testbed-pfc", overrides={"duration": "2ms", "warmup": "1ms"})
    assert r.summary["flows_at_min_rate"] is None
    assert r.flows.at_min_rate.isna().all()
