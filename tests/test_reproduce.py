"""`rttlab reproduce timely --quick`: the report, its data and scenarios, and the trends the
TIMELY paper states, checked on the quick run; the sweep runner's grid, Parquet and Dask paths."""

import re
from pathlib import Path

import pandas as pd
import pytest
import rttlab
from conftest import holds
from rttlab.cli import main as cli
from rttlab.experiments import REGISTRY, groups

ROOT = Path(__file__).resolve().parents[1]
EXPERIMENTS = groups()["timely"]


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("timely")
    out = tmp / "report"
    assert (
        cli(["reproduce", "timely", "--quick", "--no-progress", "--out", str(out), "--cache", str(tmp / "cache")]) == 0
    )
    checks = pd.read_csv(out / "data" / "checks.csv")
    return out, checks


def test_every_experiment_has_its_section_figure_data_and_scenarios(report):
    out, checks = report
    page = (out / "index.html").read_text()
    assert "http://" not in page and "https://" not in page  # opens without a network
    sections = re.findall(r'<section id="([^"]+)">(.*?)</section>', page, flags=re.S)
    assert [name for name, _ in sections] == EXPERIMENTS
    for name, body in sections:
        assert "data:image/png;base64," in body and "The paper:" in body and "Agreement." in body, name
        assert (out / "figures" / f"{name}.png").stat().st_size > 10_000
        assert (out / "figures" / f"{name}.pdf").exists()
        table = pd.read_csv(out / "data" / f"{name}-table.csv")
        assert list(table.columns) == ["quantity", "unit", "rttlab", "paper"] and table.rttlab.notna().all()
        assert len(list((out / "data").glob(f"{name}-*.csv"))) >= 2, name
        assert list((out / "scenarios" / name).glob("*.toml")), name
        assert (checks.experiment == name).any(), name


def test_a_reported_point_reruns_alone_to_the_same_numbers(report):
    out, _ = report
    fig12 = pd.read_csv(out / "data" / "timely-fig12-summary.csv").set_index("noise_us")
    r = rttlab.run(out / "scenarios" / "timely-fig12" / "noise_us-100_software-none_seed-1.toml")
    assert r.summary["throughput_gbps"] == fig12.throughput_gbps[100]
    assert r.meta["scenario"]["nic"]["rtt_noise"] == "100us"


def test_table1_beside_the_paper(report):
    out, checks = report
    df = pd.read_csv(out / "data" / "timely-table1-table1.csv")
    assert list(df.columns) == [
        "system",
        "metric",
        "label",
        "unit",
        "rttlab",
        "rttlab_sd",
        "paper",
        "ratio",
        "at_20us",
        "one_link",
    ]
    systems = ["DCTCP", "FAST* 10M", "FAST* 50M", "FAST* 100M", "PFC", "TIMELY"]
    for metric in ("throughput_gbps", "rtt_avg_us", "rtt_p99_us"):
        cells = df[df.metric == metric]
        assert list(cells.system) == systems and cells.paper.notna().all()
    assert holds(checks, "timely-table1", "DCTCP, PFC and TIMELY run the server's 20 Gbps")
    assert holds(checks, "timely-table1", "FAST*: throughput and RTT grow with α")
    assert holds(checks, "timely-table1", "TIMELY's average and p99 RTT at least 4× below PFC's")
    v = df.set_index(["system", "metric"]).rttlab
    assert v["DCTCP", "drops"] == 0 and v["PFC", "drops"] == 0


def test_large_scale_trends_on_the_quick_fabric(report):
    out, checks = report
    # Fig. 22 on the k = 4 fat-tree: TIMELY keeps the background's throughput under the incast,
    # and its tail RTT below PFC's.
    assert holds(checks, "timely-fig22", "TIMELY does not")
    assert holds(checks, "timely-fig22", "p99 RTT with the incast is lower with TIMELY")
    fig19 = pd.read_csv(out / "data" / "timely-fig19-summary.csv")
    # Below saturation both carry what is offered.
    light = fig19[fig19.load == 0.2]
    assert ((light.accepted - light.offered).abs() < 0.01 * light.offered).all()
    # Every reading of the clients' server sets runs; PFC never waits for a rate, and TIMELY's
    # rate holds segments back longer on persistent connections than with a server per RPC.
    r = pd.read_csv(out / "data" / "timely-fig19-readings.csv")
    assert set(r.reading) == {"m = 1", "m = 2", "m = 4", "m = 8", "per RPC"}
    assert (r[r.system == "PFC"].rate_wait_us == 0).all() and (r[r.system == "PFC"].below_line_rate == 0).all()
    top = r[(r.system == "TIMELY") & (r.load == r.load.max())].set_index("reading").rate_wait_us
    assert (top.drop("per RPC") > top["per RPC"]).all(), top


def test_trends_the_paper_states(report):
    _, checks = report
    # Fig. 9: the gradient beats a 500 µs target on the tail.
    assert holds(checks, "timely-fig09", "the gradient's tail RTT is below a 500 µs target's")
    # Fig. 10: smoother rates with the gradient.
    assert holds(checks, "timely-fig10", "rates are smoother with the gradient")
    # Fig. 12: throughput falls as noise grows.
    assert holds(checks, "timely-fig12", "50 µs of noise visibly lowers throughput")
    assert holds(checks, "timely-fig12", "more noise lowers it further")
    # Fig. 13: near the fair share, fair.
    assert holds(checks, "timely-fig13", "the sampled connections run close to the 500 Mbps fair share")
    # Fig. 15: T_low matters, and more with larger segments.
    assert holds(checks, "timely-fig15", "16 KB: no T_low costs throughput")
    assert holds(checks, "timely-fig15", "64 KB: a small T_low")
    assert holds(checks, "timely-fig15", "a lower T_low gives a lower RTT")
    # Fig. 16: NIC pacing recovers 64 KB throughput at T_low 50 µs, and throttles at the fair share.
    assert holds(
        checks, "timely-fig16", "NIC pacing at 700 Mbps recovers throughput lost to 64 KB bursts (T_low 50 µs)"
    )
    assert holds(checks, "timely-fig16", "pacing at the fair share (500 Mbps) throttles")
    # Fig. 17: T_high trims the tail as load grows.
    assert holds(checks, "timely-fig17", "the tail grows with connections")
    assert holds(checks, "timely-fig17", "lowering T_high lowers the tail")
    # Fig. 18: HAI reaches 1.5 Gbps sooner than a fixed increment.
    assert holds(checks, "timely-fig18", "HAI (on every increase) reaches 1.5 Gbps sooner")
    assert holds(checks, "timely-fig14", "TIMELY's tail is below PFC's")


def test_list_names_every_experiment(capsys):
    assert cli(["list"]) == 0
    text = capsys.readouterr().out
    for name in REGISTRY:
        assert name in text


def test_unknown_target_is_a_clear_error(capsys):
    assert cli(["reproduce", "timely-fig99", "--quick", "--no-cache"]) == 2
    err = capsys.readouterr().err
    assert "timely-fig99" in err and "allowed" in err and "Traceback" not in err


SHORT = ["--set", "duration=3ms", "--set", "warmup=1ms"]


def test_sweep_grid_writes_one_tidy_row_per_run(tmp_path, capsys):
    out = tmp_path / "sweep.csv"
    args = [
        "sweep",
        str(ROOT / "scenarios" / "timely-testbed.toml"),
        *SHORT,
        "--grid",
        "cc.t_low=0us,50us",
        "--grid",
        "nic.segment=16KB,32KB",
    ]
    assert cli([*args, "--seeds", "1,2", "--out", str(out), "--cache", str(tmp_path / "c"), "--no-progress"]) == 0
    df = pd.read_csv(out)
    assert len(df) == 8 and {"cc.t_low", "nic.segment", "seed", "throughput_gbps", "rtt_p99_us"} <= set(df.columns)
    assert sorted(set(df["cc.t_low"])) == ["0us", "50us"] and sorted(set(df.seed)) == [1, 2]
    # Parquet from the cache: same numbers, nothing runs again.
    pq = tmp_path / "sweep.parquet"
    assert cli([*args, "--seeds", "1,2", "--out", str(pq), "--cache", str(tmp_path / "c"), "--no-progress"]) == 0
    assert pd.read_parquet(pq).throughput_gbps.tolist() == df.throughput_gbps.tolist()
    assert cli([*args, "--out", str(tmp_path / "x.xlsx")]) == 2
    assert "must end in .csv or .parquet" in capsys.readouterr().err


def test_identical_points_run_once(tmp_path):
    from rttlab import sweep

    s = rttlab.resolve(ROOT / "scenarios" / "timely-testbed.toml", overrides={"duration": "3ms", "warmup": "1ms"})
    results = sweep.run_all([s, dict(s), dict(s, seed=2)], jobs=1, cache_dir=tmp_path, progress=False)
    assert len(list(tmp_path.glob("*.json"))) == 2
    assert results[0].summary == results[1].summary != results[2].summary


def test_sweep_on_a_dask_cluster_matches_local_runs(tmp_path):
    distributed = pytest.importorskip("distributed")
    from rttlab import sweep

    base = rttlab.resolve(ROOT / "scenarios" / "timely-testbed.toml", overrides={"duration": "3ms", "warmup": "1ms"})
    points = [dict(base, seed=s) for s in (1, 2, 3)]
    local = sweep.run_all(points, jobs=1, progress=False)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        remote = sweep.run_all(points, scheduler=cluster.scheduler_address, cache_dir=tmp_path, progress=False)
        with distributed.Client(cluster) as client:  # a Client object works too
            again = sweep.run_all(points, scheduler=client, progress=False)
    assert [r.summary for r in remote] == [r.summary for r in local] == [r.summary for r in again]
    assert len(list(tmp_path.glob("*.json"))) == 3


def test_report_numbers_have_three_significant_digits():
    from rttlab.report import _fmt

    assert [_fmt(x) for x in (4.7341, 1060.2, 598.0, 59.83, 0.01234, 0.0, float("nan"), None)] == [
        "4.73",
        "1060",
        "598",
        "59.8",
        "0.0123",
        "0",
        "–",
        "–",
    ]
