"""`rttlab reproduce training --quick`: Ultra Ethernet beside the other schemes on both fabrics
and path choices renders its four sections; every collective finishes no faster than its ideal,
PFC's incast runs drop nothing while UET's trim instead, and the permutation's share of the
capacity is a fraction."""

import pandas as pd
from rttlab.cli import main as cli


def test_reproduce_training_quick(tmp_path):
    out = tmp_path / "r"
    assert cli(["reproduce", "training", "--quick", "--no-cache", "--no-progress", "--out", str(out)]) == 0
    html = (out / "index.html").read_text()
    for name in ("training-collectives", "training-incast", "training-permutation", "training-mixed"):
        assert name in html
    jobs = pd.read_csv(out / "data" / "training-collectives-collectives.csv")
    assert set(jobs.scheme) == {"UET NSCC", "UET NSCC+RCCC", "DCQCN", "Swift"}
    assert set(jobs.fabric) == {"fat-tree", "leaf-spine 4:1"} and set(jobs["mode"]) == {"ECMP", "per-packet"}
    assert jobs.second.notna().all() and (jobs[["first", "second"]] >= 1).all().all()
    incast = pd.read_csv(out / "data" / "training-incast-incast.csv")
    assert (incast[incast.scheme == "DCQCN"].drops == 0).all()
    assert (incast[incast.scheme.str.startswith("UET")].trims > 0).all() and (
        incast.pauses[incast.scheme != "DCQCN"] == 0
    ).all()
    perm = pd.read_csv(out / "data" / "training-permutation-permutation.csv")
    assert perm.of_capacity.between(0, 1).all()
