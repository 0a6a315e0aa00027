"""`make bench`: what a congestion controller written in Python costs. TIMELY in Python
(`examples/timely.py`) against the native one, on TIMELY's testbed (100 ms) and on the RPC
workload of a k = 4 fat-tree (the Clos scenario at k = 4, 20 ms): wall time of the simulation
(`meta["perf"]["wall_s"]`), the two alternating, with the ratio of each pair and their median.
The results must be bit-identical; the ratio is reported, not checked (it is the machine's)."""

import statistics
import sys
from pathlib import Path

import rttlab

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
from timely import Timely

CASES = {
    "timely-testbed, 100 ms": ("timely-testbed", {"duration": "100ms", "warmup": "10ms"}),
    "timely-clos-rpc at k = 4, 20 ms": ("timely-clos-rpc", {"duration": "20ms", "warmup": "5ms", "topology.k": 4}),
}
ROUNDS = 3


def main() -> int:
    for name, (scenario, overrides) in CASES.items():
        ratios, native_s, python_s = [], [], []
        for _ in range(ROUNDS):
            native = rttlab.run(scenario, overrides)
            python = rttlab.run(scenario, overrides, controller=Timely)
            if native.summary != python.summary:
                print(f"python-controllers: {name}: the Python TIMELY's results differ from the native one's")
                return 1
            n, p = native.meta["perf"]["wall_s"], python.meta["perf"]["wall_s"]
            native_s.append(n)
            python_s.append(p)
            ratios.append(p / n)
        events = native.meta["perf"]["events"]
        pairs = " ".join(f"{r:.1f}" for r in ratios)
        print(
            f"python-controllers: {name}: native {statistics.median(native_s):.2f} s, Python {statistics.median(python_s):.2f} s wall ({events} events, {native.summary['rtt_samples']} RTT samples); Python ÷ native per pair {pairs}, median {statistics.median(ratios):.1f}×"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
