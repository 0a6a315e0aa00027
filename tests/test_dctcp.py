"""ns-3's DCTCP example as the shipped scenario `ns3-dctcp-example`, against the example's
documented output (about 23, 471 and 74 Mbps per S1, S2 and S3 sender; Jain above 0.99) and the
DCTCP estimates of a run of ns-3.37 (rttlab.experiments.dctcp.ns3_example)."""

from __future__ import annotations

import json

import pytest
import rttlab
from rttlab.cli import main as cli
from rttlab.experiments.dctcp.ns3_example import DOCUMENTED, NS3_S2_ALPHA


@pytest.fixture(scope="module")
def example():
    return rttlab.run("ns3-dctcp-example")


def test_groups_match_the_examples_output_where_both_bottleneck_models_agree(example):
    g = example.groups.set_index(example.groups["group"].astype(str))
    for name in ("S2-R2", "S3-R1"):
        mbps = g.goodput_per_flow_gbps[name] * 1e3
        assert abs(mbps / DOCUMENTED[name] - 1) <= 0.15, f"{name}: {mbps:.1f} Mbps vs {DOCUMENTED[name]}"
    assert (g.jain > 0.98).all(), g.jain
    # S2's DCTCP senders settle where ns-3's do.
    f = example.flows
    alpha = f[f.group == 1].dctcp_alpha.mean()
    assert abs(alpha / NS3_S2_ALPHA - 1) <= 0.15, alpha
    # S1 crosses both bottlenecks and gets more than ns-3 gives it: ns-3's DCTCP sender counts
    # about a third fewer echoed marks than its queues make, so its queues mark more (the
    # report's discussion). The difference is bounded: not a drift.
    s1 = g.goodput_per_flow_gbps["S1-R1"] * 1e3
    assert DOCUMENTED["S1-R1"] < s1 < 1.45 * DOCUMENTED["S1-R1"], s1


def test_both_bottlenecks_are_full_and_their_queues_sit_on_the_red_slope(example):
    p = example.ports.set_index(example.ports["port"].astype(str))
    measured = example.summary["measured_s"]
    assert p.tx_payload_bytes["t1-t2"] * 8 / measured / 1e9 > 9.5
    assert p.utilization["t2-r1"] > 0.99
    # Above the 100-packet device queue, each queue disc sits between MinTh and 2·MaxTh.
    for port, (lo, hi), rate in (("t1-t2", (50, 300), 10e9), ("t2-r1", (20, 120), 1e9)):
        disc = p.queue_avg_kb[port] * 1e3 / 1502 - 100
        assert lo < disc < hi, (port, disc)
        assert p.queue_delay_avg_us[port] == pytest.approx(p.queue_avg_kb[port] * 1e3 * 8 / rate * 1e6)


def test_the_cli_prints_what_the_example_prints(capsys):
    assert cli(["run", "ns3-dctcp-example", "--set", "duration=1200ms", "--set", "warmup=1s", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [g["group"] for g in out["groups"]] == ["S1-R1", "S2-R2", "S3-R1"]
    assert [g["flows"] for g in out["groups"]] == [10, 20, 10]
    assert [p["port"] for p in out["ports"]] == ["t1-t2", "t2-r1"]
    assert all(0 < g["jain"] <= 1 for g in out["groups"])


def test_reproduce_dctcp_writes_its_report(tmp_path, capsys):
    assert cli(["reproduce", "dctcp", "--quick", "--no-cache", "--no-progress", "--out", str(tmp_path / "r")]) == 0
    html = (tmp_path / "r" / "index.html").read_text()
    assert "ns-3" in html and "K + N" in html
    assert (tmp_path / "r" / "data" / "ns3-dctcp-groups.csv").exists()
