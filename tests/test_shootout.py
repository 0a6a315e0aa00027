"""`rttlab reproduce shootout --quick`: every scheme on the k = 8 fat-tree renders its FCT-slowdown
figure, per-bucket data and scenarios, and every check is decided by numbers."""

import pandas as pd
from rttlab.cli import main as cli


def test_reproduce_shootout_quick_covers_every_scheme(tmp_path):
    out = tmp_path / "r"
    assert cli(["reproduce", "shootout", "--quick", "--no-cache", "--no-progress", "--out", str(out)]) == 0
    assert "shootout-fabric" in (out / "index.html").read_text()
    summary = pd.read_csv(out / "data" / "shootout-fabric-summary.csv")
    schemes = {"DCQCN (paper)", "DCQCN (mellanox)", "TIMELY", "Patched TIMELY", "DCTCP", "Swift", "HPCC"}
    assert set(summary.scheme) == schemes
    # Every run finished flows, and slowdown is at least 1 (no flow beats its ideal FCT).
    assert (summary.flows > 100).all(), summary[["scheme", "workload", "flows"]]
    buckets = pd.read_csv(out / "data" / "shootout-fabric-buckets.csv")
    assert (buckets.dropna(subset=["slowdown_p50"]).slowdown_p50 >= 1.0).all()
    assert len(list((out / "scenarios").rglob("*.toml"))) >= 14
