"""Progress of one long run on a terminal: simulated time done, events per second and an ETA,
drawn on stderr and removed when the run ends."""

from __future__ import annotations

import sys
import time

from tqdm import tqdm


class RunProgress:
    """An ``observe`` callback for `_core.run_json` that draws a progress bar over simulated
    time (in ms). It never stops the run (returns False)."""

    def __init__(self, desc: str = "simulating") -> None:
        self.desc = desc
        self.bar: tqdm | None = None
        self.t0 = time.monotonic()

    def __call__(self, now_ps: int, end_ps: int, events: int) -> bool:
        if self.bar is None:
            fmt = "{desc}: {percentage:3.0f}%|{bar}| {n:.1f}/{total:.1f} ms simulated [{elapsed}<{remaining}{postfix}]"
            self.bar = tqdm(
                total=end_ps / 1e9,
                desc=self.desc,
                file=sys.stderr,
                leave=False,
                bar_format=fmt,
                dynamic_ncols=True,
                mininterval=0,
            )
        rate = events / max(time.monotonic() - self.t0, 1e-9)
        self.bar.set_postfix_str(f"{rate / 1e6:.1f} M events/s", refresh=False)
        self.bar.update(now_ps / 1e9 - self.bar.n)  # tqdm's own rate and ETA follow the updates
        return False

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()

    def __enter__(self) -> RunProgress:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
