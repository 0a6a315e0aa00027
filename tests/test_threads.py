"""One simulation on several threads (run.threads): the same results, and runs side by side
get one thread each unless told otherwise."""

from __future__ import annotations

import json

import rttlab
from rttlab.cli import main
from rttlab.sweep import resolve, scenario_key, with_threads

SHORT = {"duration": "300us", "warmup": "100us"}


def test_two_threads_give_the_same_results_and_say_so():
    one = rttlab.run("fat-tree-websearch-dctcp", overrides={**SHORT, "run.threads": 1})
    two = rttlab.run("fat-tree-websearch-dctcp", overrides={**SHORT, "run.threads": 2})
    assert one.summary == two.summary
    assert one.flows.equals(two.flows) and one.groups.equals(two.groups)
    assert (one.meta["perf"]["threads"], two.meta["perf"]["threads"]) == (1, 2)
    assert one.meta["perf"]["partitions"] is None
    parts = two.meta["perf"]["partitions"]
    assert len(parts) == 2 and all(
        p["events"] > 0 and p["events_s"] > 0 and p["waiting_s"] >= 0 and p["mail_s"] >= 0 for p in parts
    )


def test_a_threaded_run_says_where_each_thread_spent_its_time(capsys):
    assert (
        main(["run", "fat-tree-websearch-dctcp", "--threads", "2", "--set", "duration=300us", "--set", "warmup=100us"])
        == 0
    )
    lines = [line for line in capsys.readouterr().out.splitlines() if line.strip().startswith("(thread ")]
    assert len(lines) == 2 and all(
        "% on events" in line and "% waiting for the others" in line and "% on mail" in line for line in lines
    )


def test_the_thread_count_is_not_part_of_the_cache_key():
    s = resolve(rttlab.load("fat-tree-websearch-dctcp"))
    assert s["run"] == {"threads": "auto"}
    assert scenario_key(s) == scenario_key(with_threads(s, 4, False))


def test_runs_side_by_side_get_one_thread_unless_told():
    s = resolve(rttlab.load("fat-tree-websearch-dctcp"))
    assert with_threads(s, None, True)["run"]["threads"] == 1
    assert with_threads(s, None, False) is s
    assert with_threads(s, 2, True)["run"]["threads"] == 2
    told = {**s, "run": {"threads": 3}}
    assert with_threads(told, None, True) is told


def test_a_time_series_runs_on_one_thread_and_the_run_says_why(capsys):
    assert (
        main(
            [
                "run",
                "fat-tree-websearch-dctcp",
                "--threads",
                "2",
                "--set",
                "duration=200us",
                "--set",
                "warmup=50us",
                "--set",
                "measure.timeseries_interval=50us",
                "--json",
            ]
        )
        == 0
    )
    captured = capsys.readouterr()
    assert "ran on one thread" in captured.err and "time series" in captured.err
    assert json.loads(captured.out)["throughput_gbps"] >= 0


def test_a_bad_thread_count_names_the_field():
    try:
        rttlab.run("fat-tree-websearch-dctcp", overrides={**SHORT, "run.threads": 0})
    except ValueError as e:
        assert "run.threads" in str(e) and "1 to 1024" in str(e)
    else:
        raise AssertionError("run.threads = 0 was accepted")
