"""`rttlab reproduce failures --quick`: a core link down (ECMP, PRR, spraying, REPS), a degraded
link per routing mode and silent losses per transport render their sections, data and scenarios;
the counts that must hold at any size are checked on its numbers."""

import pandas as pd
from rttlab.cli import main as cli


def test_reproduce_failures_quick(tmp_path):
    out = tmp_path / "r"
    assert cli(["reproduce", "failures", "--quick", "--no-cache", "--no-progress", "--out", str(out)]) == 0
    html = (out / "index.html").read_text()
    for name in ["failures-outage", "failures-degraded", "failures-loss"]:
        assert name in html
    outage = pd.read_csv(out / "data" / "failures-outage-outage.csv")
    by = outage.set_index(["case", "failover_delay"])
    # The link's loss is counted; only PRR repaths; a longer black hole loses more.
    assert (outage.lost_down > 0).all()
    assert (outage[outage.case != "ECMP, PRR"].repaths == 0).all() and (
        outage[outage.case == "ECMP, PRR"].repaths > 0
    ).all()
    assert by.lost_down[("ECMP", "3ms")] > by.lost_down[("ECMP", "0.5ms")]
    degraded = pd.read_csv(out / "data" / "failures-degraded-degraded.csv")
    assert (
        list(degraded.case) == ["ECMP", "weighted ECMP", "adaptive", "spraying"] and degraded.slowdown_p99.ge(1).all()
    )
    loss = pd.read_csv(out / "data" / "failures-loss-loss.csv")
    assert (loss[loss.loss == 0].lost_silent == 0).all() and (loss[loss.loss > 0].lost_silent > 0).all()
    assert len(list((out / "scenarios").rglob("*.toml"))) == len(outage) + len(degraded) + len(loss)
