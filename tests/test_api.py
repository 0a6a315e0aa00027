"""The Python front end: rttlab.run, results as DataFrames, errors, and the CLI."""

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import rttlab
from rttlab.cli import main as cli
from rttlab.scenario import parse_value

ROOT = Path(__file__).resolve().parents[1]
TESTBED = ROOT / "scenarios" / "timely-testbed-pfc.toml"
SHORT = {"duration": "12ms", "warmup": "2ms"}


@pytest.fixture(scope="module")
def pfc():
    return rttlab.run(TESTBED, overrides=SHORT)


def test_run_returns_summary_tables_and_meta(pfc):
    s = pfc.summary
    for key in ["throughput_gbps", "goodput_gbps", "rtt_avg_us", "rtt_p50_us", "rtt_p99_us", "jain", "pauses", "drops"]:
        assert key in s
    assert isinstance(pfc.flows, pd.DataFrame) and len(pfc.flows) == 40
    assert list(pfc.rtt.columns) == ["rtt_us", "count", "cdf"] and pfc.rtt["cdf"].iloc[-1] == pytest.approx(1.0)
    assert pfc.rtt["count"].sum() == s["rtt_samples"]
    assert len(pfc.queues) == 24_000  # 1 µs samples of the two bonded bottleneck ports over 12 ms
    assert set(pfc.timeseries.columns) == {
        "time_us",
        "flow",
        "delivered_bytes",
        "delivered_gbps",
        "cc_rate_gbps",
        "at_min_rate",
        "cwnd_bytes",
        "fcwnd_pkts",
        "ecwnd_pkts",
        "rtt_us",
        "inflight_bytes",
        "retransmits",
        "drops",
        "ecn_echoed_bytes",
    }
    assert pfc.meta["seed"] == 1 and pfc.meta["rttlab_version"] == rttlab.__version__
    # The scenario as run records every default.
    assert pfc.meta["scenario"]["nic"]["segment"] == "16KB"
    assert pfc.meta["scenario"]["duration"] == "12ms"


def test_testbed_pfc_baseline(pfc):
    s = pfc.summary
    assert s["throughput_gbps"] >= 19.0
    assert s["pauses"] > 0 and s["drops"] == 0
    assert s["bytes_sent"] == s["bytes_delivered"] + s["bytes_in_flight"]


def test_dict_and_toml_text_inputs_agree():
    text = TESTBED.read_text()
    a = rttlab.run(text, overrides=SHORT).summary
    b = rttlab.run(rttlab.load(TESTBED), overrides=SHORT).summary
    assert a == b


def test_seed_changes_results():
    a = rttlab.run(TESTBED, overrides=SHORT, seed=5).summary
    b = rttlab.run(TESTBED, overrides=SHORT, seed=5).summary
    c = rttlab.run(TESTBED, overrides=SHORT, seed=6).summary
    assert a == b and a != c


@pytest.mark.parametrize(
    "overrides, words",
    [
        ({"topology.link_rate": "10Gbs"}, ["topology.link_rate", "10Gbs", "Gbps"]),
        ({"nic.segment": "0B"}, ["nic.segment", "0B"]),
        ({"flows.0.dst": 42}, ["flows[0].dst", "42", "hosts are 0..10"]),
        ({"switch.pfc_xoff": "10KB"}, ["switch.pfc_xoff", "10KB", "pfc_xon"]),
        ({"nic.bogus": 1}, ["nic", "bogus"]),
        ({"warmup": "1s"}, ["warmup", "1s", "shorter than duration"]),
        ({"nic.host_load": "busy"}, ["nic.host_load", "busy", 'timestamps = "software"']),
        ({"nic.timestamps": "kernel"}, ["nic.timestamps", "kernel", "nic", "software"]),
    ],
)
def test_invalid_scenarios_raise_value_error_naming_the_field(overrides, words):
    with pytest.raises(ValueError) as e:
        rttlab.run(TESTBED, overrides=overrides)
    for w in words:
        assert w in str(e.value), str(e.value)


def test_software_timestamps_add_the_host_s_delay_to_every_sample():
    """One connection alone at line rate (no controller, so the samples do not steer it): with
    NIC timestamps every sample is the same, and with software timestamps each holds a draw of
    the measured wake-up delay on top, with a longer tail on a busy host; the same seed gives
    the same draws."""
    one = {**SHORT, "flows.0.src": 1, "flows.0.connections": 1}
    nic = rttlab.run(TESTBED, overrides=one).summary
    idle = rttlab.run(TESTBED, overrides={**one, "nic.timestamps": "software"}).summary
    busy = rttlab.run(TESTBED, overrides={**one, "nic.timestamps": "software", "nic.host_load": "busy"}).summary
    assert nic["rtt_p99_us"] - nic["rtt_avg_us"] < 1.0
    assert nic["throughput_gbps"] == idle["throughput_gbps"] == busy["throughput_gbps"]
    assert idle["rtt_avg_us"] > nic["rtt_avg_us"] + 5 and busy["rtt_p99_us"] > idle["rtt_p99_us"] + 100
    assert rttlab.run(TESTBED, overrides={**one, "nic.timestamps": "software"}).summary == idle


def test_save_writes_everything(tmp_path, pfc):
    out = pfc.save(tmp_path / "run")
    assert json.loads((out / "summary.json").read_text()) == pfc.summary
    assert (out / "flows.csv").exists() and (out / "meta.json").exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_cli_json_and_set(capsys):
    assert cli(["run", str(TESTBED), "--set", "duration=12ms", "--set", "warmup=2ms", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["drops"] == 0 and summary["throughput_gbps"] > 19


def test_until_flows_done_ends_the_run_at_the_last_completion(capsys):
    # 40 × 1 MB through PFC into 100 Gbps: 40 MB of payload plus headers is at least
    # 40e6 × 1064/1000 × 8 / 100e9 = 3.405 ms; every flow finishes, nothing is dropped.
    incast = ROOT / "scenarios" / "fat-incast-100g.toml"
    r = rttlab.run(incast, overrides={"flows.0.size": "1MB"})
    s = r.summary
    assert s["flows_finished"] == s["flows"] == 40 and s["drops"] == 0
    assert s["bytes_delivered"] == 40_000_000
    assert 3.405e-3 <= s["measured_s"] < 3.6e-3
    assert r.meta["perf"]["simulated_s"] == s["measured_s"]
    assert cli(["run", str(incast), "--set", "flows.0.size=1MB"]) == 0
    assert "ms simulated (until the flows were done, at most 1s)" in capsys.readouterr().out


def test_cli_bad_input_exits_2_without_traceback():
    p = subprocess.run(
        [sys.executable, "-m", "rttlab.cli", "run", str(TESTBED), "--set", "nic.mtu=abc"],
        capture_output=True,
        text=True,
    )
    assert p.returncode == 2
    assert "nic.mtu" in p.stderr and "abc" in p.stderr
    assert "Traceback" not in p.stderr and "panicked" not in p.stderr
    p = subprocess.run([sys.executable, "-m", "rttlab.cli", "run", "missing.toml"], capture_output=True, text=True)
    assert p.returncode == 2 and "does not exist" in p.stderr


def test_timely_options_are_recorded_in_meta():
    r = rttlab.run(
        ROOT / "scenarios" / "timely-testbed.toml",
        overrides={"duration": "60ms", "warmup": "50ms", "cc.hai_counter": "raw_diff"},
    )
    cc = r.meta["scenario"]["cc"]
    assert cc["algorithm"] == "timely"
    assert cc["hai_counter"] == "raw_diff" and cc["update_scaling"] == "all" and cc["alpha"] == 0.02
    assert cc["t_low"] == "50us" and cc["t_high"] == "500us" and cc["beta"] == 0.8


def test_bad_cc_option_names_field_and_choices():
    with pytest.raises(ValueError, match=r"cc\.hai_counter: unknown variant `sometimes`"):
        rttlab.run(ROOT / "scenarios" / "timely-testbed.toml", overrides={"cc.hai_counter": "sometimes"})
    with pytest.raises(ValueError, match=r"cc\.beta = 1\.5: a factor in \(0, 1\]"):
        rttlab.run(ROOT / "scenarios" / "timely-testbed.toml", overrides={"cc.beta": 1.5})


def test_window_controller_needs_the_window_transport():
    with pytest.raises(
        ValueError, match=r'cc\.algorithm = dctcp: transport\.kind = "message" needs a window controller'
    ):
        rttlab.run(ROOT / "scenarios" / "timely-testbed.toml", overrides={"cc": {"algorithm": "dctcp"}})
    with pytest.raises(ValueError, match=r"transport\.min_rto = 0ps: must be positive"):
        rttlab.run(ROOT / "scenarios" / "timely-testbed-dctcp.toml", overrides={"transport.min_rto": "0us"})
    with pytest.raises(ValueError, match=r"switch\.ecn\.mark_at: unknown variant `later`"):
        rttlab.run(ROOT / "scenarios" / "timely-testbed-dctcp.toml", overrides={"switch.ecn.mark_at": "later"})


def test_null_override_removes_a_key():
    s = rttlab.resolve(ROOT / "scenarios" / "timely-testbed-dctcp.toml", overrides={"switch.ecn": None})
    assert s["switch"]["ecn"] is None
    assert parse_value("null") is None


def test_list_entries_are_set_by_dotted_or_bracketed_index_and_one_past_the_end_adds_one():
    from rttlab.scenario import set_key

    s = {"faults": [{"at": "0s", "link": "s0-s4", "kind": "down"}]}
    set_key(s, "faults[0].link", "s8-s16")
    set_key(s, "faults.0.kind", "drop")
    assert s["faults"] == [{"at": "0s", "link": "s8-s16", "kind": "drop"}]
    set_key(s, "faults[1].link", "s1-s5")
    assert s["faults"][1] == {"link": "s1-s5"}
    fresh: dict = {}
    set_key(fresh, "faults[0].link", "s0-s4")
    assert fresh == {"faults": [{"link": "s0-s4"}]}
    with pytest.raises(ValueError, match=r"--set faults\.3: index '3' is not one of 0\.\.2 \(2 adds an entry\)"):
        set_key(s, "faults[3].link", "s0-s4")


def test_sweep_reuses_cached_results_and_keeps_order(tmp_path, monkeypatch):
    from rttlab import sweep

    base = rttlab.load(TESTBED)
    base.update(SHORT)
    points = [dict(base, seed=seed) for seed in (3, 1, 2)]
    first = sweep.run_all(points, jobs=2, cache_dir=tmp_path, progress=False)
    assert [r.meta["seed"] for r in first] == [3, 1, 2]
    assert len(list(tmp_path.glob("*.json"))) == 3

    def no_run(_):
        raise AssertionError("a cached scenario ran again")

    monkeypatch.setattr(sweep, "_run_json", no_run)
    again = sweep.run_all(points, jobs=1, cache_dir=tmp_path, progress=False)
    assert [r.summary for r in again] == [r.summary for r in first]
    # A changed scenario is a different key: it must run.
    with pytest.raises(AssertionError, match="ran again"):
        sweep.run_all([dict(base, seed=4)], jobs=1, cache_dir=tmp_path, progress=False)


def test_sweep_rejects_an_invalid_point_before_running(tmp_path):
    from rttlab import sweep

    good = dict(rttlab.load(TESTBED), **SHORT)
    bad = dict(good, duration="0ms")
    with pytest.raises(ValueError, match="duration = 0ps: must be positive"):
        sweep.run_all([good, bad], cache_dir=tmp_path, progress=False)
    assert not list(tmp_path.glob("*.json"))


FAT_TREE = {
    "duration": "4ms",
    "warmup": "1ms",
    "topology": {"kind": "fat_tree", "k": 4, "link_rate": "10Gbps", "link_delay": "1us"},
    "nic": {"segment": "64KB"},
    "workloads": [
        {"kind": "rpc", "peers": "longest_path", "size": "64KB", "rate": 3000.0},
        {"kind": "flow_sizes", "cdf": "fb_hadoop", "load": 0.2},
        {"kind": "pinger", "interval": "50us"},
    ],
}


def test_workloads_report_groups_fct_and_latency():
    r = rttlab.run(FAT_TREE)
    g = r.groups.set_index("kind")
    assert list(g.index) == ["rpc", "flow_sizes", "pinger"]
    assert g.rpcs_completed["rpc"] > 0 and g.rpc_p99_us["rpc"] >= g.rpc_p50_us["rpc"] > 0
    assert g.flows_finished["flow_sizes"] > 0 and g.ping_samples["pinger"] > 0
    fct = r.fct
    assert set(fct.group) == {"workloads[1]"} and fct.bucket.iloc[-1] == "all"
    assert (fct.slowdown_p50.dropna() >= 1.0).all()
    assert r.summary["rpcs_completed"] == g.rpcs_completed["rpc"]
    assert r.flow_records.empty  # only kept when asked
    kept = rttlab.run(FAT_TREE, {"measure.flow_records": True}).flow_records
    done = kept[kept.finished == 1]
    assert len(done) == g.flows_finished["flow_sizes"] and (done.slowdown >= 1.0).all()
    # The flows still under way at the end are there too, without an FCT, their outage to the end.
    under_way = kept[kept.finished == 0]
    assert under_way.fct_us.isna().all() and (under_way.outage_us > 0).all()


@pytest.mark.parametrize(
    "overrides, words",
    [
        ({"topology.k": 3}, ["topology.k", "3", "even"]),
        ({"workloads.1.cdf": "web"}, ["workloads[1].cdf", "websearch"]),
        ({"workloads.1.load": 1.5}, ["workloads[1].load", "1.5", "(0, 1]"]),
        ({"workloads.0.kind": "rpcs"}, ["workloads[0].kind", "rpc, flow_sizes"]),
        ({"workloads.0.servers": [99]}, ["workloads[0].servers", "99", "hosts are 0..15"]),
        ({"transport.kind": "window", "cc.algorithm": "dctcp"}, ["workloads[0].kind", "message"]),
        ({"measure.fct_buckets": ["1MB", "10KB"]}, ["measure.fct_buckets", "increasing"]),
    ],
)
def test_bad_workloads_and_topologies_name_the_field(overrides, words):
    with pytest.raises(ValueError) as e:
        rttlab.run(FAT_TREE, overrides)
    for w in words:
        assert w in str(e.value), (w, str(e.value))


def test_a_zero_rate_is_a_clear_error_for_every_rate_controller():
    for algorithm in ("timely", "patched_timely", "fast"):
        for key in ("initial_rate", "max_rate"):
            p = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "rttlab.cli",
                    "run",
                    str(TESTBED),
                    "--set",
                    f"cc.algorithm={algorithm}",
                    "--set",
                    f"cc.{key}=0bps",
                ],
                capture_output=True,
                text=True,
            )
            assert p.returncode == 2, (algorithm, key, p.stderr)
            assert f"cc.{key} = 0bps: positive" in p.stderr and "panicked" not in p.stderr


def test_a_panic_is_an_internal_error_without_a_backtrace(monkeypatch, capsys):
    """A bug in the simulator reaches the user as one line that says it is a bug, exit 70."""
    from rttlab import _core

    with pytest.raises(rttlab.InternalError, match=r"a bug in rttlab.*a deliberate panic at crates/py/src/lib\.rs"):
        _core._panic_for_test()
    monkeypatch.setattr(_core, "run", lambda *_: _core._panic_for_test())
    assert cli(["run", str(TESTBED), "--set", "duration=1ms", "--set", "warmup=0ms"]) == 70
    err = capsys.readouterr().err
    assert (
        err.startswith("rttlab: internal error (a bug in rttlab") and "Traceback" not in err and "panicked" not in err
    )


@pytest.mark.parametrize(
    "overrides, message",
    [
        ({"cc.beta": float("nan")}, "cc.beta = nan: must be a finite number"),
        ({"cc.beta": float("-inf")}, "cc.beta = -inf: must be a finite number"),
        ({"flows.0.connections": float("inf")}, "flows[0].connections = inf: must be a finite number"),
        (
            {"duration": parse_value("1979-05-27T07:32:00Z")},
            "duration = 1979-05-27 07:32:00+00:00: dates and times are not scenario values",
        ),
        ({"warmup": parse_value("07:32:00")}, "warmup = 07:32:00: dates and times"),
        ({"seed": {1, 2}}, "seed: a set is not a scenario value"),
    ],
)
def test_values_json_cannot_carry_are_errors_naming_the_key(overrides, message):
    with pytest.raises(ValueError) as e:
        rttlab.run(TESTBED, overrides)
    assert str(e.value).startswith(message), str(e.value)


def test_deep_nesting_is_an_error_not_a_recursion_error():
    for depth in (40, 5000):
        text = TESTBED.read_text() + "\nextra = " + "[" * depth + "]" * depth + "\n"
        with pytest.raises(ValueError, match=r"nested more than 32 deep"):
            rttlab.run(text)


def test_native_results_equal_the_json_path_with_typed_columns():
    """`rttlab.run` takes the tables as NumPy arrays; the run cache's JSON gives the same frames.
    Integers are int64, missing floats NaN, integers with gaps nullable Int64, names text."""
    from rttlab import _core
    from rttlab.result import TABLES, Result
    from rttlab.scenario import load, to_json

    for name, over in [("timely-testbed", {}), ("fat-tree-websearch-dctcp", {"measure.flow_records": True})]:
        s = rttlab.scenario.apply_overrides(load(name), {"duration": "2ms", "warmup": "1ms", **over})
        native, text = rttlab.run(s), Result.from_json(_core.run_json(to_json(s)))
        for t in TABLES:
            pd.testing.assert_frame_equal(native.tables[t], text.tables[t])
        assert native.summary == text.summary
    f = rttlab.run(TESTBED, {"duration": "2ms", "warmup": "1ms"}).flows
    assert f.bytes_sent.dtype == "int64" and f.stop_us.dtype == "float64" and f.stop_us.isna().all()
    assert str(f.cwnd_bytes.dtype) == "Int64" and f.cwnd_bytes.isna().all(), "message flows have no window"
    assert (f.dst - f.src).min() < 0, "differences of id columns do not wrap"
    w = native.flows
    assert str(w.cwnd_bytes.dtype) == "Int64" and w.cwnd_bytes.notna().all()
    assert native.queue_stats.port.dtype == object and native.flow_records.group.iloc[0].startswith("workloads")


def test_version_is_printed(capsys):
    with pytest.raises(SystemExit) as e:
        cli(["--version"])
    assert e.value.code == 0 and capsys.readouterr().out == f"rttlab {rttlab.__version__}\n"


def test_timeseries_delivered_gbps_adds_up_to_the_goodput():
    """`delivered_gbps` is each connection's payload per sampling interval: summed over the
    connections and averaged over the measured intervals it is the run's goodput."""
    r = rttlab.run(TESTBED, {"duration": "12ms", "warmup": "2ms", "measure.timeseries_interval": "100us"})
    ts = r.timeseries[r.timeseries.time_us > 2000]
    per_instant = ts.groupby("time_us").delivered_gbps.sum()
    assert per_instant.mean() == pytest.approx(r.summary["goodput_gbps"], rel=0.02)
    assert (r.flows.cc_rate_gbps == 10.0).all(), "no congestion control: the line rate"


def test_a_result_shows_its_headline_and_saves_parquet_with_its_types(tmp_path):
    r = rttlab.run(TESTBED, {"duration": "2ms", "warmup": "1ms"})
    assert repr(r).startswith("<rttlab.Result timely-testbed-pfc (seed 1): goodput_gbps=") and "flows 40" in repr(r)
    assert "<table" in r._repr_html_() and "rtt_p99_us" in r._repr_html_()
    r.save(tmp_path / "out", format="parquet")
    back = pd.read_parquet(tmp_path / "out" / "flows.parquet")
    pd.testing.assert_frame_equal(back, r.flows)
    with pytest.raises(ValueError, match="format = 'xlsx': one of csv, parquet"):
        r.save(tmp_path / "other", format="xlsx")
    assert not (tmp_path / "other").exists()
    assert (
        cli(
            [
                "run",
                str(TESTBED),
                "--set",
                "duration=2ms",
                "--set",
                "warmup=1ms",
                "--out",
                str(tmp_path / "cli"),
                "--format",
                "parquet",
            ]
        )
        == 0
    )
    assert (tmp_path / "cli" / "queues.parquet").exists() and not (tmp_path / "cli" / "queues.csv").exists()


def test_host_nic_queues_and_littles_law_on_the_pfc_testbed():
    """The paused senders hold their backlog in their NICs, and the ports table and queue
    samples see it; each connection's mean bytes in flight is its completion rate times its
    mean time in the system (Little's law), the RTT plus the segment's serialization."""
    r = rttlab.run(
        TESTBED, overrides={"duration": "30ms", "warmup": "10ms", "measure.queue_ports": ["s0-h0_p0", "h1-s0"]}
    )
    h1 = r.ports.set_index(["port", "class"]).loc[("h1-s0", 1)]
    assert h1.paused_fraction > 0.7 and h1.pfc_received > 100
    assert h1.queue_avg_kb > 100, "the sender's NIC backlog counts as its port's queue"
    sampled = r.queue_stats.set_index("port").loc["h1-s0"]
    assert sampled.avg_kb == pytest.approx(h1.queue_avg_kb, rel=0.01)
    assert h1.queue_p99_kb == pytest.approx(sampled.p99_kb, rel=0.01)
    f = r.flows
    serialization_us = 16_000 * 8 / 10e9 * 1e6
    little = f.goodput_gbps * 1e9 / 8 * (f.rtt_avg_us + serialization_us) * 1e-6
    assert (f.inflight_avg_bytes / little).between(0.97, 1.03).all()
    assert r.summary["inflight_avg_bytes"] == pytest.approx(f.inflight_avg_bytes.sum())
    # Every port-class row adds up to the summary's counters.
    assert r.ports.pauses_sent.sum() == r.summary["pauses"]
    assert r.ports.paused_us.sum() == pytest.approx(r.summary["paused_us"])


def test_per_flow_series_of_drops_marks_and_retransmits():
    r = rttlab.run(
        ROOT / "scenarios" / "timely-testbed-dctcp.toml",
        overrides={"duration": "20ms", "warmup": "5ms", "measure.timeseries_interval": "1ms"},
    )
    f, ts = r.flows.set_index("flow"), r.timeseries
    assert r.ports.ecn_marks.sum() == r.summary["ecn_marks"] > 0
    assert f.ecn_echoed_bytes.sum() > 0 and f.inflight_avg_bytes.isna().all(), (
        "window flows have no message in-flight mean"
    )
    last = ts[ts.time_us == ts.time_us.max()].set_index("flow")
    for col in ["ecn_echoed_bytes", "retransmits", "drops"]:
        assert (last[col] == f[col]).all(), col
        assert (ts.groupby("flow")[col].diff().dropna() >= 0).all(), f"{col} is cumulative"
    assert last.inflight_bytes.isna().all()


def test_sweep_tables_have_numeric_columns_in_the_unit_their_name_states(tmp_path):
    from rttlab import sweep

    base = rttlab.load(ROOT / "scenarios" / "timely-testbed.toml")
    base.update({"duration": "1ms", "warmup": "0us"})
    every = sweep.grid(
        base, {"cc.t_low": ["0us", "50us", "0.1ms"], "nic.segment": ["16KB", "32KiB", "64KB"], "seed": [1, 2, 3]}
    )
    cells = [every[i] for i in (0, 13, 26)]
    df = sweep.sweep_table(cells, sweep.run_all([s for _, s in cells], jobs=1, cache_dir=None, progress=False))
    assert list(df.columns[:5]) == ["cc.t_low", "cc.t_low_us", "nic.segment", "nic.segment_bytes", "seed"]
    assert list(df["cc.t_low_us"]) == [0.0, 50.0, 100.0] and list(df["nic.segment_bytes"]) == [16_000, 32_768, 64_000]
    assert df["cc.t_low_us"].dtype == "float64" and "throughput_gbps" in df
    assert rttlab._core.quantity("25Gbps") == ("gbps", 25.0) and rttlab._core.quantity("fast") is None


STAR_500M = {
    "duration": "5ms",
    "topology": {"kind": "star", "hosts": 5, "link_rate": "500Mbps", "link_delay": "1us"},
    "transport": {"kind": "window"},
    "cc": {"algorithm": "swift"},
    "flows": [{"src": "1-4", "dst": 0}],
}


def test_a_knob_that_leaves_the_controller_unable_to_act_is_a_warning_with_a_value_that_works(capsys):
    # Swift's 25 µs target is below the unloaded RTT of a 500 Mbps star (about 54 µs).
    r = rttlab.run(STAR_500M)
    [advice] = [w for w in r.warnings if w.startswith("cc.base_target")]
    assert "try cc.base_target = " in advice
    fixed = rttlab.run(STAR_500M, overrides={"cc.base_target": advice.rsplit("= ", 1)[1]})
    assert not [w for w in fixed.warnings if w.startswith("cc.")]
    # Acting on the advice is what lets Swift fill the link (0.47 against 0.08 Gbps here).
    assert r.summary["goodput_gbps"] < 0.2 < 0.4 < fixed.summary["goodput_gbps"]


def test_a_reports_section_lists_its_runs_warnings_as_notes(tmp_path):
    import matplotlib.pyplot as plt
    from rttlab import report
    from rttlab.experiments import Executed, Experiment, Outcome, Run

    runs = [Run({"seed": s}, rttlab.run(STAR_500M, seed=s)) for s in (1, 2)]
    table = pd.DataFrame({"quantity": ["goodput"], "unit": ["Gbps"], "rttlab": [0.1], "paper": [None]})
    outcome = Outcome(figure=plt.figure(), table=table, checks=[], data={}, discussion="-")
    exp = Experiment("star", "test", "A star", "-", points=lambda q: [], analyse=lambda r, q: outcome)
    page = (
        report.write(tmp_path / "r", [Executed(exp, outcome, runs)], title="t", quick=True) / "index.html"
    ).read_text()
    assert "Notes from the runs" in page
    assert "cc.base_target = 25us" in page and "(2 of 2 runs)" in page
