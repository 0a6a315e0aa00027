"""htsim's connection matrices and collective jobs: `rttlab run SCENARIO --matrix FILE` runs a
matrix's transfers on the scenario's fabric, a scenario file's `[[workloads]] kind = "matrix"`
finds its file beside it, and the transfers table gives each transfer's times by its matrix id;
a `[[jobs]]` entry reports each iteration and step."""

import pandas as pd
import rttlab
from rttlab.cli import main as cli

CHAIN = """Nodes 3
Connections 3
Triggers 2
0->1 id 1 start 0 size 14360 recv_done_trigger 1
1->2 id 2 trigger 1 size 14360 send_done_trigger 2
2->0 id 3 trigger 2 size 14360
trigger id 1 oneshot
trigger id 2 oneshot
"""


def test_run_with_a_matrix_on_a_presets_fabric(tmp_path, capsys):
    (tmp_path / "chain.cm").write_text(CHAIN)
    out = tmp_path / "r"
    argv = [
        "run",
        "timely-testbed",
        "--matrix",
        str(tmp_path / "chain.cm"),
        "--set",
        "warmup=0s",
        "--set",
        "duration=2ms",
    ]
    assert cli([*argv, "--out", str(out)]) == 0
    t = pd.read_csv(out / "transfers.csv")
    assert list(t.id) == [1, 2, 3] and t.recv_done_us.notna().all()
    # Each starts after the one whose trigger it waits for: on its receipt, then on its acknowledgement.
    assert t.start_us[1] > t.recv_done_us[0] and t.start_us[2] > t.send_done_us[1]
    assert cli([*argv[:3], str(tmp_path / "none.cm")]) == 2
    assert "a connection matrix file that can be read" in capsys.readouterr().err


def test_a_scenario_file_finds_its_matrix_beside_it(tmp_path):
    (tmp_path / "chain.cm").write_text(CHAIN)
    (tmp_path / "s.toml").write_text(
        'duration = "1ms"\n[topology]\nkind = "star"\nhosts = 3\nlink_rate = "10Gbps"\nlink_delay = "1us"\n'
        '[[workloads]]\nkind = "matrix"\nfile = "chain.cm"\n'
    )
    r = rttlab.run(tmp_path / "s.toml")
    assert len(r.transfers) == 3 and r.transfers.fct_us.notna().all()


def test_a_job_reports_its_iterations_and_steps():
    r = rttlab.run(
        'duration = "1ms"\n[topology]\nkind = "star"\nhosts = 4\nlink_rate = "10Gbps"\nlink_delay = "1us"\n'
        '[cc]\nalgorithm = "none"\n[[jobs]]\ncollective = "allreduce_ring"\nhosts = "0-3"\nsize = "256KB"\niterations = 2\n'
    )
    assert list(r.jobs.iteration) == [0, 1] and (r.jobs.collective == "allreduce_ring").all()
    assert (r.jobs.slowdown >= 1).all() and r.jobs.completion_us.notna().all()
    assert len(r.steps) == 2 * 6 and r.steps.end_us.is_monotonic_increasing


def test_an_edited_matrix_runs_again(tmp_path):
    from rttlab.sweep import run_all

    (tmp_path / "m.cm").write_text(CHAIN)
    s = {
        "duration": "1ms",
        "until": "flows_done",
        "topology": {"kind": "star", "hosts": 3, "link_rate": "10Gbps", "link_delay": "1us"},
        "workloads": [{"kind": "matrix", "file": str(tmp_path / "m.cm")}],
    }
    first = run_all([s], cache_dir=tmp_path / "cache", progress=False)[0]
    # A cached result for the same file; a new one once the file says otherwise.
    assert run_all([s], cache_dir=tmp_path / "cache", progress=False)[0].summary == first.summary
    (tmp_path / "m.cm").write_text(CHAIN.replace("size 14360 send_done_trigger 2", "size 143600 send_done_trigger 2"))
    again = run_all([s], cache_dir=tmp_path / "cache", progress=False)[0]
    assert again.transfers.size_bytes[1] == 143600 and again.summary != first.summary
