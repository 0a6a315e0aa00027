"""`rttlab reproduce swift --quick`: the Swift report and the trends the paper states that the
quick T1 runs decide; Swift's scenario keys and errors through Python."""

import re
from pathlib import Path

import pandas as pd
import pytest
import rttlab
from conftest import holds
from rttlab.cli import main as cli
from rttlab.experiments import groups

EXPERIMENTS = groups()["swift"]
T1 = Path(__file__).resolve().parents[1] / "scenarios" / "swift-t1.toml"


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("swift")
    out = tmp / "report"
    assert cli(["reproduce", "swift", "--quick", "--no-progress", "--out", str(out), "--no-cache"]) == 0
    return out, pd.read_csv(out / "data" / "checks.csv")


def test_every_experiment_has_its_section_and_scenarios(report):
    out, checks = report
    page = (out / "index.html").read_text()
    assert [name for name in re.findall(r'<section id="([^"]+)">', page)] == EXPERIMENTS
    for name in EXPERIMENTS:
        assert (out / "figures" / f"{name}.png").stat().st_size > 5_000
        assert list((out / "scenarios" / name).glob("*.toml")), name
        assert (checks.experiment == name).any(), name


def test_trends_the_quick_runs_decide(report):
    _, checks = report
    assert holds(checks, "swift-fig19", "with 1 KB writes the endpoint window limits")
    assert holds(checks, "swift-fig19", "with 64 KB writes the fabric window limits")
    assert holds(checks, "swift-table4", "Swift has higher throughput than Swift-v0 with a 100 µs target")
    assert holds(checks, "swift-table4", "Swift has lower average RTT than Swift-v0 with a 200 µs target")
    assert holds(checks, "swift-table3", "Swift keeps line rate")
    assert holds(checks, "swift-table3", "Swift's loss rate is below 0.01 %")
    assert holds(checks, "swift-table3", "without cwnd < 1 loss exceeds 5 %")
    assert holds(checks, "swift-fig21", "without it fairness is worse")
    assert holds(checks, "swift-fig22", "with it the two are fair")


def test_results_record_the_swift_profile_and_its_values():
    r = rttlab.run(T1, {"duration": "3ms", "warmup": "1ms"})
    cc = r.meta["scenario"]["cc"]
    assert cc["profile"] == "paper" and cc["min_cwnd"] == 0.001 and cc["fs_max_cwnd"] == 256.0
    assert r.meta["scenario"]["transport"]["delayed_ack"] is False
    flows = r.flows
    assert flows.fcwnd_pkts.notna().all() and flows.ecwnd_pkts.notna().all()
    assert r.summary["loss_rate"] == 0.0 and r.summary["host_drops"] == 0


@pytest.mark.parametrize(
    ("key", "value", "field"),
    [
        ("cc.profile", "pony", "cc.profile"),
        ("cc.beta", 1.5, "cc.beta"),
        ("transport.delayed_ack", True, "transport.delayed_ack"),
        ("host.rx_queue_packets", 0, "host.rx_queue_packets"),
        ("flows.0.write", "0B", "flows[0].write"),
        ("nic.pacing_rate", "10Gbps", "nic.pacing_rate = 10Gbps: a message-transport NIC setting"),
        ("nic.segment", "64KB", "nic.segment = 64KB: a message-transport NIC setting"),
    ],
)
def test_bad_swift_input_names_the_field(key, value, field):
    with pytest.raises(ValueError, match=re.escape(field)):
        rttlab.run(T1, {key: value})
