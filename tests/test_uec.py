"""htsim_uec's validation plans read unchanged (`rttlab reproduce uec`): the plan reader, the
fabric htsim builds for a plan (computed by hand from `main_uec.cpp`), the flags it maps and the
ones it names as not mapped, and the quick form's runs beside htsim's outputs."""

import dataclasses
import json

import pandas as pd
import pytest
from rttlab.cli import main as cli
from rttlab.experiments.uec.plans import (
    DATA,
    PlanError,
    bdp_packets,
    credit_window,
    failed_ports,
    read_outputs,
    read_plan,
    scenario,
    unloaded_rtt_us,
)
from rttlab.scenario import resolve

SENDER = DATA / "plans" / "validate_uec_sender.txt"
RECEIVER = DATA / "plans" / "validate_uec_rcv.txt"
BOTH = DATA / "plans" / "validate_uec_both.txt"


def test_the_sender_plan_and_htsims_outputs_read():
    blocks = read_plan(SENDER)
    assert len(blocks) == 15
    first = blocks[0]
    assert (first.name, first.matrix, first.tail_target_us) == (
        "Single Connection",
        "connection_matrices/one.cm",
        190.0,
    )
    assert first.params == [("-end", "1000", 4), ("-sender_cc_only", None, 5)]
    outs = read_outputs(DATA / "validate_outputs" / "validate_uec_sender.out")
    assert len(outs) == 15 and outs[0].tail_us == 176.2 and (outs[0].new, outs[0].acks) == (490, 124)
    assert (outs[2].tail_us, outs[2].rtx, outs[2].nacks) == (2478.53, 811, 811)


def test_the_fabric_is_htsims():
    # calculate_rtt: six 1 µs links both ways, a 4150 B packet's and a 64 B ACK's serialization
    # at 100 Gbps on each (332 ns and 5.12 ns): 12 + 1.992 + 0.03072 µs. Its BDP, 175 284 B, is
    # 42.2 packets: 43, 178 450 B; ECN from ceil(8.6) = 9 to ceil(34.4) = 35 packets.
    assert unloaded_rtt_us() == pytest.approx(14.02272)
    assert bdp_packets() == 43
    s = scenario("p", read_plan(SENDER)[0])
    assert s["topology"]["k"] == 4 and s["switch"]["queue_limit"] == "178450B"
    assert (s["switch"]["ecn"]["kmin"], s["switch"]["ecn"]["kmax"]) == ("37350B", "145250B")
    assert s["cc"]["target_delay"] == "10517.040ns" and s["duration"] == "1000us"
    # -failed 8 on k = 16: the first aggregation switch's eight uplinks, core to aggregation.
    assert failed_ports(16, 8) == [f"s{256 + c}-s128" for c in range(8)]
    assert failed_ports(4, 3) == ["s16-s8", "s17-s8", "s18-s9"]


def test_a_flag_rttlab_does_not_map_is_named_with_its_line():
    block = read_plan(SENDER)[0]
    reuse = dataclasses.replace(block, params=[*block.params, ("-switch_latency", "1", 7)])
    with pytest.raises(PlanError, match=r"^sender.txt:7: -switch_latency: not a flag rttlab maps yet"):
        scenario("sender.txt", reuse)


def test_reproduce_uec_quick_holds_htsims_numbers(tmp_path):
    out = tmp_path / "r"
    assert cli(["reproduce", "uec-sender", "--quick", "--no-cache", "--no-progress", "--out", str(out)]) == 0
    html = (out / "index.html").read_text()
    assert "uec-sender" in html and "htsim" in html
    assert "(6 of 6 hold)" in html


def test_messages_on_one_connection_match_htsims_connection_reuse_plan(tmp_path):
    """htsim's `msg` lines: ten messages on one connection finish as one message of their total
    size, at htsim's FCT (its sender's last acknowledgement: 17.0107 and 46.8907 µs)."""
    out = tmp_path / "r"
    assert cli(["reproduce", "uec-connreuse", "--quick", "--no-cache", "--no-progress", "--out", str(out)]) == 0
    assert "(2 of 2 hold)" in (out / "index.html").read_text()
    runs = pd.read_csv(out / "data" / "uec-connreuse-runs.csv")
    assert len(runs) == 12 and ((runs.tail_us - runs.htsim_tail_us).abs() < 0.05).all()


def test_receiver_credits_are_mapped_as_htsims_flags_set_them():
    # initRccc: 1.5 BDP at the unloaded RTT, 175 284 B (truncated): 262 926 B.
    assert credit_window() == 262_926
    rcv = scenario("rcv", read_plan(RECEIVER)[2])
    assert rcv["transport"] == {"kind": "uet", "congestion": "rccc", "credit_window": "262926B"}
    # set_ecn_parameters(true, !receiver_driven, ...): no marks towards the hosts.
    assert rcv["switch"]["ports"] == [{"ports": ["s*-h*"], "ecn": False}]
    both = scenario("both", read_plan(BOTH)[2])
    assert both["transport"]["congestion"] == "both"
    assert "congestion" not in scenario("snd", read_plan(SENDER)[2])["transport"]


def test_reproduce_uec_receiver_quick_holds_htsims_numbers(tmp_path):
    out = tmp_path / "r"
    assert cli(["reproduce", "uec-receiver", "--quick", "--no-cache", "--no-progress", "--out", str(out)]) == 0
    html = (out / "index.html").read_text()
    assert "uec-receiver" in html and "(7 of 7 hold)" in html


def test_htsims_topology_files_map_with_their_diameter_and_oversubscription():
    block = read_plan(RECEIVER)[13]
    s = scenario("rcv", block)
    assert s["topology"]["kind"] == "graph" and s["topology"]["file"].endswith(
        "topologies/leaf_spine_1024_oversub.topo"
    )
    # Two tiers: four 1 µs links both ways and a packet's and an ACK's serialization on each,
    # 8 + 4 × 0.33712 = 9.34848 µs; 116 856 B, 29 packets of queue, 1.5 × 116 856 of credit.
    assert s["switch"]["queue_limit"] == f"{29 * 4150}B"
    assert s["transport"] == {"kind": "uet", "congestion": "rccc", "credit_window": "175284B", "oversubscription": 4}
    with pytest.raises(PlanError, match="-failed with -topo"):
        scenario("rcv", dataclasses.replace(block, params=[*block.params, ("-failed", "1", 99)]))


def test_run_takes_an_htsim_topology_file(tmp_path, capsys):
    topo = tmp_path / "small.topo"
    tiers = "Tier 0\nDownlink_speed_Gbps 100\nRadix_Down 4\nRadix_Up 2\nDownlink_Latency_ns 1000\nOversubscribed 2\n"
    topo.write_text(
        f"Nodes 8\nTiers 2\nPodsize 8\n{tiers}Tier 1\nDownlink_speed_Gbps 100\nRadix_Down 2\nDownlink_Latency_ns 500\n"
    )
    flows = tmp_path / "s.toml"
    flows.write_text(
        'duration = "100us"\n[[flows]]\nsrc = "1-3"\ndst = 7\nsize = "100KB"\n[transport]\nkind = "uet"\n[cc]\nalgorithm = "nscc"\n'
    )
    assert cli(["run", str(flows), "--topo", str(topo), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["flows"], out["flows_finished"]) == (3, 3)
    # The scenario as run records the file and its nodes and links, and reads back as it is.
    resolved = resolve(
        {"duration": "1ms", "topology": {"kind": "graph", "file": str(topo)}, "flows": [{"src": 0, "dst": 7}]}
    )
    assert resolved["topology"]["file"] == str(topo) and len(resolved["topology"]["switches"]) == 4
    assert resolve(resolved)["topology"] == resolved["topology"]
    topo.write_text(topo.read_text().replace("Radix_Up 2", "Radix_Up 2\nBundle 2"))
    assert cli(["run", str(flows), "--topo", str(topo)]) == 2
    err = capsys.readouterr().err
    assert f"topology.file = {topo}: line 8: bundle 2:" in err and len(err.strip().splitlines()) == 1
