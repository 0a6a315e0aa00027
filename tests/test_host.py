"""The real host: the kernel programs against crates/cc (the differential test), a short run
per controller, the testbed's cleanup after SIGINT and SIGKILL, and the errors for what the
testbed cannot do. Skipped, with the reason, where the machine cannot run it (root, BTF, the
tools: `make test` installs them when run as root)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time

import pytest
import rttlab.host as host
from conftest import cli_child
from rttlab.host import testbed

REASON = host.missing()
needs_host = pytest.mark.skipif(REASON is not None, reason=f"the real host cannot run here: {REASON}")
CONTROLLERS = ["timely", "patched-timely", "swift", "dctcp"]
SHORT = {"duration": "600ms", "warmup": "100ms"}


#: struct_ops maps of the testbed's that existed before these tests (an earlier session's
#: crashed run's, unregistered and waiting for its sockets): not these tests' to answer for.
BEFORE = set(testbed.struct_ops()) if REASON is None else set()


def leftovers() -> dict[str, list]:
    """What of the testbed's exists: namespaces, struct_ops maps, and qdiscs of the root
    namespace's links named like the testbed's ports. (The kernel frees an unregistered map
    once its last socket is gone, which takes a moment after the namespaces are.)"""

    def maps() -> list:
        return [m for m in testbed.struct_ops() if m not in BEFORE]

    deadline = time.monotonic() + 3
    while maps() and time.monotonic() < deadline:
        time.sleep(0.1)
    qdiscs = subprocess.run(["tc", "qdisc", "show"], capture_output=True, text=True).stdout
    return {
        "netns": testbed.namespaces(),
        "struct_ops": maps(),
        "tc": [line for line in qdiscs.splitlines() if " dev p" in line or "rttlab" in line],
    }


NOTHING = {"netns": [], "struct_ops": [], "tc": []}


@pytest.fixture(scope="module")
def runs() -> dict[str, object]:
    """One short run per controller with its decisions kept (each ~2 s)."""
    if REASON:
        pytest.skip(REASON)
    return {cc: host.run(f"host-{cc}", SHORT, decisions=True) for cc in CONTROLLERS}


@needs_host
@pytest.mark.parametrize("cc", CONTROLLERS)
def test_every_kernel_decision_is_crates_cc_within_the_fixed_point_bound(runs, cc):
    d = host.replay(runs[cc])
    decided = d[d.kernel.notna()]
    assert len(decided) >= 100, f"{len(decided)} decisions"
    outside = decided[~decided.within & ~decided.exempt]
    assert outside.empty, outside.head().to_string()
    # Exempt decisions (a branch within rounding of its threshold) are rare.
    assert decided.exempt.mean() < 0.01
    # The bound is not loose: the largest error uses a visible part of it somewhere.
    assert (decided.error / decided.bound).max() > 1e-3


@needs_host
@pytest.mark.parametrize("cc", CONTROLLERS)
def test_a_kernel_run_fills_the_simulators_result(runs, cc):
    r = runs[cc]
    s = r.summary
    # Two senders into 500 Mbps: what holds however the kernel schedules the run (how well
    # they share the link is the next test's).
    assert 0 < s["goodput_gbps"] <= 0.5
    assert s["rtt_samples"] > 100 and 0 < s["rtt_p50_us"] <= s["rtt_p99_us"]
    assert len(r.flows) == 2 and set(r.flows.src) == {1, 2} and set(r.flows.dst) == {0}
    assert r.flows.goodput_gbps.sum() == pytest.approx(s["goodput_gbps"])
    assert len(r.queues) > 100 and r.queue_stats.port.tolist() == ["sw.p0"]
    assert r.meta["host"]["lost_records"] == 0
    assert not r.timeseries.empty and set(r.timeseries.flow) == {0, 1}
    if cc == "dctcp":
        assert s["ecn_marks"] > 0 and r.flows.dctcp_alpha.notna().all()
    if cc in ("timely", "patched-timely"):
        # Between the controller's floor (10 Mbps) and the line rate, from the first sample on.
        assert r.timeseries.cc_rate_gbps.between(0.01, 0.5).all()
    assert r.meta["host"]["tso"]
    assert leftovers() == NOTHING


@needs_host
@pytest.mark.flaky(reruns=2)
@pytest.mark.parametrize("cc", CONTROLLERS)
def test_two_kernel_senders_share_the_link(cc):
    """How well the link is used and shared depends on the moment's kernel scheduling on this
    machine's two cores: a run that misses is run again, up to twice."""
    s = host.run(f"host-{cc}", SHORT).summary
    assert 0.1 < s["goodput_gbps"] <= 0.5
    assert s["jain"] > 0.8
    assert 5 <= s["rtt_p50_us"] <= s["rtt_p99_us"] < 100_000
    assert leftovers() == NOTHING


@needs_host
@pytest.mark.parametrize("how", [signal.SIGINT, signal.SIGKILL])
def test_nothing_is_left_after_an_interrupted_or_killed_run(tmp_path, how):
    p = cli_child(["host", "run", "host-dctcp", "--set", "duration=20s"])
    deadline = time.monotonic() + 20
    while not set(testbed.struct_ops()) - BEFORE and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(0.5)
    assert testbed.namespaces() and testbed.struct_ops(), "the run did not start"
    p.send_signal(how)
    t = time.monotonic()
    try:
        _, err = p.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        p.kill()  # so that the testbed is free for the tests after this one
        p.communicate()
        raise
    if how == signal.SIGINT:
        assert time.monotonic() - t < 3 and p.returncode == 130, err
        assert "interrupted" in err
        assert leftovers() == NOTHING
    else:
        # A killed run cleans nothing; its loader goes with it (PR_SET_PDEATHSIG), and the next
        # start removes the rest.
        time.sleep(0.5)
        assert testbed.namespaces()
        r = host.run("host-dctcp", {"duration": "200ms", "warmup": "50ms"})
        assert any(x.startswith("netns rttlab-") for x in r.meta["host"]["stale_removed"])
        assert leftovers() == NOTHING


@needs_host
def test_the_command_line_runs_and_cleans(tmp_path):
    out = tmp_path / "r"
    p = subprocess.run(
        [
            sys.executable,
            "-m",
            "rttlab.cli",
            "host",
            "run",
            "host-swift",
            "--set",
            "duration=300ms",
            "--set",
            "warmup=50ms",
            "--json",
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["goodput_gbps"] > 0.1
    assert (out / "flows.csv").exists() and (out / "meta.json").exists()
    p = subprocess.run([sys.executable, "-m", "rttlab.cli", "host", "clean"], capture_output=True, text=True)
    assert p.returncode == 0 and "nothing" in p.stdout


@pytest.mark.parametrize(
    "overrides, key",
    [
        ({"switch.pfc": True}, "switch.pfc"),
        ({"topology.link_delay": "10us"}, "topology.link_delay"),
        ({"topology.kind": "dumbbell"}, "topology.kind"),
        ({"cc": {"algorithm": "linux", "name": "vegas"}}, "cc.name"),
        ({"switch.ecn.mark_at": "dequeue"}, "switch.ecn.mark_at"),
        ({"flows.0.start_jitter": "10us"}, "flows\\[0\\].start_jitter"),
        ({"until": "flows_done", "flows.0.size": "1MB"}, "until"),
        ({"nic.timestamps": "software"}, "nic.timestamps"),
    ],
)
def test_what_the_testbed_cannot_do_is_a_clear_error(overrides, key):
    """Checked before anything touches the machine, so these run without root too."""
    with pytest.raises(ValueError, match=key.replace(".", r"\.")):
        host.run("host-dctcp", overrides)


@pytest.mark.skipif(REASON is None, reason="this machine can run the real host")
def test_without_the_machine_the_host_refuses_with_the_reason():
    p = subprocess.run(
        [sys.executable, "-m", "rttlab.cli", "host", "run", "host-dctcp"], capture_output=True, text=True
    )
    assert p.returncode == 1 and REASON in p.stderr


@needs_host
def test_reproduce_host_puts_the_simulator_beside_the_kernel(tmp_path):
    out = tmp_path / "report"
    p = subprocess.run(
        [
            sys.executable,
            "-m",
            "rttlab.cli",
            "reproduce",
            "host",
            "--quick",
            "--out",
            str(out),
            "--no-cache",
            "--no-progress",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert p.returncode == 0, p.stderr
    import pandas as pd

    cells = pd.read_csv(out / "data" / "host-cells.csv")
    assert set(cells.source) == {"kernel", "simulator", "simulator + host model"}
    assert set(cells.cc) == {"timely", "patched-timely", "swift", "dctcp"}
    diff = pd.read_csv(out / "data" / "host-differential.csv")
    assert (diff.outside == 0).all() and (diff.decisions > 100).all()
    html = (out / "index.html").read_text()
    assert "<th>kernel</th>" in html and "The kernel:" in html
    assert leftovers() == NOTHING


@needs_host
@pytest.mark.parametrize("name", ["reno", "cubic", "bbr"])
def test_linuxs_own_controllers_run_as_references(name):
    r = host.run("host-dctcp", {**SHORT, "duration": "400ms", "cc": {"algorithm": "linux", "name": name}})
    s = r.summary
    assert 0.1 < s["goodput_gbps"] <= 0.5 and s["rtt_samples"] > 100
    assert r.meta["host"]["controller"] == name and r.timeseries.cwnd_pkts.gt(0).all()
    assert leftovers() == NOTHING


@needs_host
def test_sized_flows_finish_and_say_when():
    """Two 2 MB flows into 500 Mbps: 4 MB of payload, about 70 ms at the link's payload rate."""
    r = host.run("host-dctcp", {"flows.0.size": "2MB", "duration": "400ms", "warmup": "0ms"})
    assert r.summary["flows_finished"] == 2
    assert (r.flows.bytes_delivered == 2_000_000).all()
    last = r.flows.finish_us.max()
    assert 4e6 * 8 / 0.5e9 * 1e6 <= last <= 3 * 4e6 * 8 / 0.5e9 * 1e6
    assert leftovers() == NOTHING


@needs_host
def test_software_timestamps_measure_the_host_s_wake_up():
    """The ping-pong's samples: every exchange's host part (the kernel's receive stamp of the
    reply to the application) is positive and inside its round trip; the quantiles the
    simulator draws from rise from the fastest exchange's 0; the testbed is gone after."""
    from rttlab.host import timestamps

    x = timestamps.measure("idle", exchanges=300)
    assert x.shape == (300, 2)
    assert (x[:, 1] > 0).all() and (x[:, 1] < x[:, 0]).all()
    q = timestamps.quantiles(x[:, 1] - x[:, 1].min())
    assert len(q) == timestamps.QUANTILES and q[0] == 0 and (q[1:] >= q[:-1]).all()
    assert leftovers() == NOTHING
