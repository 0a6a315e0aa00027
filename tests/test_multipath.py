"""`rttlab reproduce multipath --quick`: the routing modes on a permutation, PLB on WebSearch and
Swift's feedback filter render their sections, data and scenarios; the checks that hold at the
quick form's size are decided by its numbers."""

import pandas as pd
from rttlab.cli import main as cli


def test_reproduce_multipath_quick(tmp_path):
    out = tmp_path / "r"
    assert cli(["reproduce", "multipath", "--quick", "--no-cache", "--no-progress", "--out", str(out)]) == 0
    html = (out / "index.html").read_text()
    for name in ["multipath-permutation", "multipath-plb", "multipath-feedback"]:
        assert name in html
    perm = pd.read_csv(out / "data" / "multipath-permutation-permutation.csv").set_index("case")
    share = perm.of_bisection
    # Hash collisions: ECMP below the bisection, every per-packet mode above ECMP.
    assert share["DCTCP, ECMP"] < 0.85
    for mode in ["spraying", "REPS", "adaptive"]:
        assert share[f"DCTCP, {mode}"] > share["DCTCP, ECMP"], share
    # Only the modes that reorder reorder; go-back-N collapses where selective repeat does not.
    assert perm.reordered["DCTCP, ECMP"] == 0 and perm.reordered["DCTCP, spraying"] > 0
    assert share["DCQCN, spraying, go-back-N"] < 0.5 * share["DCQCN, ECMP, go-back-N"]
    assert share["DCQCN, spraying, selective repeat"] > 0.8 * share["DCQCN, ECMP, go-back-N"]
    plb = pd.read_csv(out / "data" / "multipath-plb-plb.csv")
    assert (plb[plb.plb == "ECMP"].repaths == 0).all()
    feedback = pd.read_csv(out / "data" / "multipath-feedback-feedback.csv")
    assert len(feedback) == 6 and feedback.throughput_gbps.gt(0).all()
    # Per-path state: subflows reorder across their paths, and RACK per subflow takes far
    # fewer of those packets for lost than under spraying.
    split, sprayed = feedback[feedback.routing == "4 subflows"], feedback[feedback.routing == "spraying"]
    assert (split.drops == 0).all() and split.retransmits.max() < 0.1 * sprayed.retransmits.min()
    assert len(list((out / "scenarios").rglob("*.toml"))) == len(perm) + len(plb) + len(feedback)
