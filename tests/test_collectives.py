"""`rttlab reproduce collectives --quick`: the ring all-reduce per scheme and routing mode, two
contending jobs and the skewed all-to-all's incast render their sections, data and scenarios,
every job finishes, and no job beats its bandwidth-optimal time."""

import pandas as pd
from rttlab.cli import main as cli


def test_reproduce_collectives_quick(tmp_path):
    out = tmp_path / "r"
    assert cli(["reproduce", "collectives", "--quick", "--no-cache", "--no-progress", "--out", str(out)]) == 0
    html = (out / "index.html").read_text()
    assert "collectives-allreduce" in html and "collectives-contention" in html
    allreduce = pd.read_csv(out / "data" / "collectives-allreduce-allreduce.csv")
    assert set(allreduce.scheme) == {"DCQCN", "DCTCP"} and set(allreduce.routing) == {"ECMP", "spraying"}
    assert allreduce.slowdown.notna().all() and (allreduce.slowdown >= 1).all()
    contention = pd.read_csv(out / "data" / "collectives-contention-contention.csv")
    both = contention[contention.case == "both"]
    assert set(both.collective) == {"allreduce_ring", "alltoall"} and both.completion_us.notna().all()
    # The incast: PFC's runs drop nothing, the others pause nothing; skew raises the ideal.
    assert "collectives-incast" in html
    fabric = pd.read_csv(out / "data" / "collectives-incast-fabric.csv")
    pfc = fabric.scheme == "DCQCN, PFC"
    assert (fabric[pfc].drops == 0).all() and (fabric[~pfc].pauses == 0).all() and len(fabric) == 12
    incast = pd.read_csv(out / "data" / "collectives-incast-incast.csv")
    ideal = incast[incast.collective == "alltoall"].groupby("case").ideal_us.first()
    assert ideal["skew 1"] > 2 * ideal["skew 0"]
    assert incast[incast.scheme == "DCQCN, PFC"].completion_us.notna().all()
