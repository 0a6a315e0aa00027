"""Bringing one's own fabric from Python: an HPCC simulator topology file beside the scenario,
read with the path taken from the scenario's directory, and hosts named in [[flows]]."""

from __future__ import annotations

import pytest
import rttlab

# A two-switch fabric in the HPCC simulator's format: hosts 0-3, switches 4 and 5.
TOPOLOGY = """6 2 5
4 5
0 4 10Gbps 0.001ms 0
1 4 10Gbps 0.001ms 0
2 5 10Gbps 0.001ms 0
3 5 10Gbps 0.001ms 0
4 5 10Gbps 0.001ms 0
"""

SCENARIO = """
duration = "200us"
[topology]
kind = "graph"
file = "topo.txt"
[[flows]]
name = "across"
src = ["h0", "h1"]
dst = ["h2", "h3"]
"""


def test_a_topology_file_beside_the_scenario_is_found_and_recorded(tmp_path, monkeypatch):
    (tmp_path / "topo.txt").write_text(TOPOLOGY)
    (tmp_path / "s.toml").write_text(SCENARIO)
    monkeypatch.chdir("/")
    r = rttlab.run(tmp_path / "s.toml")
    topo = r.meta["scenario"]["topology"]
    assert topo["file"] == str(tmp_path / "topo.txt")
    assert topo["hosts"] == ["h0", "h1", "h2", "h3"] and topo["switches"] == ["s4", "s5"]
    assert list(r.flows.dst) == [2, 3]
    assert "s4-s5" in set(r.ports.port.astype(str))
    assert next(iter(r.groups.group.astype(str))) == "across"


def test_a_lossy_link_in_the_file_is_refused_with_its_line(tmp_path):
    (tmp_path / "topo.txt").write_text(TOPOLOGY.replace("4 5 10Gbps 0.001ms 0", "4 5 10Gbps 0.001ms 0.01"))
    (tmp_path / "s.toml").write_text(SCENARIO)
    with pytest.raises(ValueError, match=r"topology.file = .*topo.txt: line 7: error rate 0.01"):
        rttlab.run(tmp_path / "s.toml")


def test_built_in_hosts_answer_to_their_names():
    r = rttlab.run(
        "timely-testbed-pfc",
        overrides={"duration": "2ms", "warmup": "1ms", "flows.0.src": "h[1-3]", "flows.0.dst": "h0"},
    )
    assert sorted(set(r.flows.src)) == [1, 2, 3] and set(r.flows.dst) == {0}
