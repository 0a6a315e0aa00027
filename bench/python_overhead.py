"""`make bench`: the Python front end's cost over the simulation. `rttlab.run` of TIMELY's testbed
for 1 s with its queue trace (a million samples) and time series must take at most 15 % longer
than the simulator's own event loop (`meta["perf"]["wall_s"]`); medians of 3 runs."""

import statistics
import sys
import time

import rttlab

LIMIT = 0.15


def main() -> int:
    scenario = rttlab.load("timely-testbed")
    overheads = []
    for _ in range(3):
        t0 = time.perf_counter()
        r = rttlab.run(scenario, {"duration": "1s"})
        total = time.perf_counter() - t0
        overheads.append((total, r.meta["perf"]["wall_s"]))
    total, sim = statistics.median(t for t, _ in overheads), statistics.median(s for _, s in overheads)
    over = total / sim - 1
    rows = len(r.queues) + len(r.timeseries)
    print(
        f"python-overhead: rttlab.run {total:.3f} s, simulation {sim:.3f} s: +{over:.1%} for {rows} table rows (limit +{LIMIT:.0%})"
    )
    return 0 if over <= LIMIT else 1


if __name__ == "__main__":
    sys.exit(main())
