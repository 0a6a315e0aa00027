"""Congestion controllers written in Python (`rttlab.RateController`, `rttlab.WindowController`):
the worked examples give bit-identical results to the native controllers, and every way a user's
controller can go wrong is an error that names it."""

import copy
import math
import subprocess
import sys
import traceback
from pathlib import Path

import pandas as pd
import pytest
import rttlab
from rttlab.sweep import run_all

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
sys.path.insert(0, str(EXAMPLES))

from dctcp import Dctcp  # noqa: E402  (examples/, put on the path above)
from timely import Timely  # noqa: E402

SHORT = {"duration": "60ms", "warmup": "10ms"}


def assert_identical(a: rttlab.Result, b: rttlab.Result) -> None:
    """Same summary and tables, to the last bit (wall-clock figures live only in meta.perf)."""
    assert a.summary == b.summary
    assert a.tables.keys() == b.tables.keys()
    for name in a.tables:
        pd.testing.assert_frame_equal(a.tables[name], b.tables[name], check_exact=True, obj=name)


def test_python_timely_is_bit_identical_to_the_native_one():
    native = rttlab.run("timely-testbed", overrides=SHORT)
    python = rttlab.run("timely-testbed", overrides=SHORT, controller=Timely)
    assert native.summary["rtt_samples"] > 1000 and native.summary["throughput_gbps"] > 10
    assert_identical(native, python)
    # The class, its resolved parameters (units converted) and its kind are in the metadata.
    cc = python.meta["scenario"]["cc"]
    assert cc["algorithm"] == "python" and cc["class"] == "timely:Timely" and cc["t_low_ps"] == 50_000_000
    # Its metrics reach the time series as the native ones do.
    assert python.timeseries["cc_rate_gbps"].notna().all()


def test_python_dctcp_is_bit_identical_to_the_native_one():
    short = {"duration": "30ms", "warmup": "5ms"}
    native = rttlab.run("timely-testbed-dctcp", overrides=short)
    python = rttlab.run("timely-testbed-dctcp", overrides=short, controller=Dctcp)
    assert native.summary["ecn_marks"] > 0
    assert_identical(native, python)
    assert python.flows["dctcp_alpha"].notna().all()


def test_parameters_from_the_scenario_with_units_and_errors_naming_the_key():
    params = Timely.resolve({"t_low_ps": "60us", "delta_bps": "20Mbps", "alpha": 0.1})
    assert params["t_low_ps"] == 60_000_000 and params["delta_bps"] == 20_000_000 and params["alpha"] == 0.1
    with pytest.raises(ValueError, match=r"cc\.talpha: .*not a parameter of Timely; its parameters: alpha, beta"):
        rttlab.run("timely-testbed", overrides={**SHORT, "cc.talpha": 0.1}, controller=Timely)
    with pytest.raises(ValueError, match=r"cc\.alpha: 2\.0: an EWMA weight"):
        rttlab.run("timely-testbed", overrides={**SHORT, "cc.alpha": 2.0}, controller=Timely)
    with pytest.raises(ValueError, match=r"cc\.t_low_ps: '10Mbps' is not a duration"):
        Timely.resolve({"t_low_ps": "10Mbps"})
    # A different value changes the run, through the scenario's own keys.
    a = rttlab.run(
        "timely-testbed", overrides={"duration": "20ms", "warmup": "5ms", "cc.t_low_ps": "30us"}, controller=Timely
    )
    assert a.meta["scenario"]["cc"]["t_low_ps"] == 30_000_000


def test_a_class_from_the_scenario_by_module_path():
    s = {**rttlab.load("timely-testbed"), **SHORT}
    s["cc"] = {"algorithm": "python", "class": "timely:Timely", "beta": 0.8}
    assert rttlab.run(s).summary == rttlab.run("timely-testbed", overrides=SHORT).summary
    for cls, match in [
        ("nosuchmodule:X", r"cc\.class: 'nosuchmodule:X': module 'nosuchmodule' cannot be imported"),
        ("timely:Nope", r"cc\.class: 'timely:Nope': module 'timely' has no 'Nope'"),
        ("timely", r"cc\.class: 'timely' is not module:Class"),
        ("math:sqrt", r"not a subclass of rttlab\.RateController"),
    ]:
        s["cc"] = {"algorithm": "python", "class": cls}
        with pytest.raises(ValueError, match=match):
            rttlab.run(s)
    s["cc"] = {"algorithm": "python"}
    with pytest.raises(ValueError, match=r"cc\.class: None: cc\.algorithm = \"python\" needs the class"):
        rttlab.run(s)


def test_the_class_kind_must_fit_the_transport():
    with pytest.raises(
        ValueError,
        match=r"cc\.class: dctcp:Dctcp is a WindowController \(window transport\); transport\.kind = 'message' takes a RateController",
    ):
        rttlab.run("timely-testbed", overrides=SHORT, controller=Dctcp)


class Raising(Timely):
    def on_completion(self, c):
        if c.now_ps > 5_000_000_000:
            raise ZeroDivisionError("the user's bug")  # the line the traceback points at
        super().on_completion(c)


class NegativeRate(Timely):
    def rate_bps(self):
        return -1.0


class NanWindow(Dctcp):
    def cwnd_bytes(self):
        return math.nan


class NoRate(rttlab.RateController):
    def on_completion(self, c):
        pass


class BadMetrics(Timely):
    def metrics(self):
        return {"rate": 1.0}


def test_an_exception_in_a_controller_stops_the_run_with_the_users_traceback():
    with pytest.raises(rttlab.ControllerError, match=r"Raising\.on_completion: the user's bug") as e:
        rttlab.run("timely-testbed", overrides=SHORT, controller=Raising)
    cause = e.value.__cause__
    assert isinstance(cause, ZeroDivisionError)
    last = traceback.extract_tb(cause.__traceback__)[-1]
    assert last.filename == __file__ and "the line the traceback points at" in last.line


@pytest.mark.parametrize(
    "cls,overrides,match",
    [
        (NegativeRate, {}, r"NegativeRate\.rate_bps: returned -1(\.0)?: a rate in bit/s, positive and finite"),
        (NanWindow, {}, r"NanWindow\.cwnd_bytes: returned NaN: a window in bytes, finite and not negative"),
        (NoRate, {}, r"NoRate\.rate_bps: NoRate must define rate_bps\(self\)"),
        (BadMetrics, {"measure.timeseries_interval": "1ms"}, r"BadMetrics\.metrics: key \"rate\": not a metric"),
    ],
)
def test_a_value_no_controller_may_return_is_an_error_naming_the_method(cls, overrides, match):
    scenario = "timely-testbed-dctcp" if issubclass(cls, rttlab.WindowController) else "timely-testbed"
    with pytest.raises(rttlab.ControllerError, match=match):
        rttlab.run(scenario, overrides={**SHORT, **overrides}, controller=cls)


def test_the_command_line_runs_a_class_beside_it_and_shows_a_failing_ones_traceback(tmp_path):
    (tmp_path / "mycc.py").write_text(
        "from rttlab import RateController\n"
        "class Slow(RateController):\n"
        "    def on_completion(self, c):\n"
        "        pass\n"
        "    def rate_bps(self):\n"
        "        return 1e9\n"
        "class Broken(Slow):\n"
        "    def on_completion(self, c):\n"
        "        return 1 / 0\n"
    )
    rttlab_cmd = [sys.executable, "-c", "import sys; from rttlab.cli import main; sys.exit(main())"]
    base = [
        "run",
        "timely-testbed",
        "--set",
        "duration=10ms",
        "--set",
        "warmup=1ms",
        "--set",
        "cc.algorithm=python",
        "--json",
        "--no-progress",
    ]
    ok = subprocess.run(
        [*rttlab_cmd, *base, "--set", "cc.class=mycc:Slow"], cwd=tmp_path, capture_output=True, text=True
    )
    assert ok.returncode == 0, ok.stderr
    bad = subprocess.run(
        [*rttlab_cmd, *base, "--set", "cc.class=mycc:Broken"], cwd=tmp_path, capture_output=True, text=True
    )
    assert bad.returncode == 1
    assert 'mycc.py", line 9, in on_completion' in bad.stderr and "ZeroDivisionError" in bad.stderr
    assert bad.stderr.strip().splitlines()[-1].startswith("rttlab: error: Broken.on_completion: division by zero")
    assert "Traceback" in bad.stderr and "rttlab/" not in bad.stderr.split("rttlab: error:")[0].replace(
        str(tmp_path), ""
    )


def test_a_sweep_imports_the_class_by_path_in_its_workers(tmp_path):
    s = {**rttlab.load("timely-testbed"), "duration": "10ms", "warmup": "2ms"}
    s["cc"] = {"algorithm": "python", "class": "timely:Timely"}
    scenarios = [rttlab.scenario.apply_overrides(copy.deepcopy(s), {"cc.beta": b}) for b in (0.5, 0.8)]
    results = run_all(scenarios, jobs=2, cache_dir=tmp_path, progress=False)
    assert [r.meta["scenario"]["cc"]["beta"] for r in results] == [0.5, 0.8]
    native = rttlab.run("timely-testbed", overrides={"duration": "10ms", "warmup": "2ms"})
    assert results[1].summary == native.summary
    # From the cache the second time.
    again = run_all(scenarios, jobs=2, cache_dir=tmp_path, progress=False)
    assert [r.summary for r in again] == [r.summary for r in results]


class LineRateWithTelemetry(rttlab.RateController):
    """Declares what HPCC declares: telemetry, an ACK per packet, no outstanding cap."""

    needs = {"int": True, "ack_per_packet": True, "rate_limiter": True}

    def on_completion(self, c):
        pass

    def rate_bps(self):
        return float(self.line_rate_bps)


def test_a_python_controllers_needs_set_the_scenarios_defaults_as_a_native_ones_do():
    short = {"duration": "2ms", "warmup": "0s"}
    native = rttlab.run("timely-testbed", overrides={**short, "cc": {"algorithm": "hpcc"}})
    python = rttlab.run("timely-testbed", overrides=short, controller=LineRateWithTelemetry)
    for r in (native, python):
        scenario = r.meta["scenario"]
        assert scenario["switch"]["int"] is True
        assert scenario["nic"]["segment"] == native.meta["scenario"]["nic"]["segment"]
        assert scenario["nic"]["max_outstanding"] == native.meta["scenario"]["nic"]["max_outstanding"]
    assert python.meta["scenario"]["cc"]["needs"]["ack_per_packet"] is True
    without = rttlab.run("timely-testbed", overrides=short, controller=LineRateNeedingNothing)
    assert without.meta["scenario"]["switch"]["int"] is False


class LineRateNeedingNothing(LineRateWithTelemetry):
    needs = {}


class MisspelledNeed(LineRateWithTelemetry):
    needs = {"intt": True}


def test_an_unknown_need_is_an_error_naming_it():
    with pytest.raises(ValueError, match=r"cc\.needs.*intt.*did you mean `int`"):
        rttlab.run("timely-testbed", overrides={"duration": "2ms"}, controller=MisspelledNeed)


class Forgetful(LineRateWithTelemetry):
    """Computes a rate and returns the line rate: a bug that would otherwise run silently."""

    needs = {}

    def on_completion(self, c):
        self.computed = self.line_rate_bps / 2


def test_a_python_controller_that_never_changes_its_rate_is_a_warning():
    r = rttlab.run("timely-testbed", overrides={"duration": "20ms", "warmup": "5ms"}, controller=Forgetful)
    assert any(
        w.startswith("cc.class = test_controllers:Forgetful: every connection still sends at its line rate")
        for w in r.warnings
    ), r.warnings
    native = rttlab.run("timely-testbed", overrides={"duration": "20ms", "warmup": "5ms"}, controller=Timely)
    assert not [w for w in native.warnings if w.startswith("cc.class")]


class RepathEvery50(Dctcp):
    """DCTCP that asks for a new path label on every 50th ACK."""

    made: list["RepathEvery50"] = []

    def __init__(self, mss_bytes, params):
        super().__init__(mss_bytes, params)
        self.acks = 0
        RepathEvery50.made.append(self)

    def on_ack(self, a):
        super().on_ack(a)
        self.acks += 1
        if self.acks % 50 == 0:
            self.repath()


def test_a_python_controller_repaths_its_connection():
    RepathEvery50.made.clear()
    short = {"duration": "2ms", "warmup": "0ms", "cc.plb": {"rounds": 1000, "threshold": 1.0}}
    r = rttlab.run("fat-tree-websearch-dctcp", overrides=short, controller=RepathEvery50)
    asked = sum(c.acks // 50 for c in RepathEvery50.made)
    assert asked > 10
    assert r.summary["repaths"] == asked
    # PLB, which every controller has, stays in the scenario beside the class's parameters.
    assert r.meta["scenario"]["cc"]["plb"] == {
        "rounds": 1000,
        "threshold": 1.0,
        "idle_only": False,
        "suspend_after_rto": "60s",
    }


def test_plb_on_a_python_controller_needs_its_ecn_declared():
    short = {**SHORT, "cc.plb": {"rounds": 3}}
    with pytest.raises(ValueError, match=r"cc\.plb = .*a Python controller that declares needs\.ecn"):
        rttlab.run("timely-testbed", overrides=short, controller=Timely)
