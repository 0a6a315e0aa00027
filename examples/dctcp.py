"""DCTCP as Linux implements it (Alizadeh et al., SIGCOMM 2010; RFC 8257) as a Python window
controller for rttlab, on Reno's slow start, congestion avoidance and loss response.

    rttlab.run("timely-testbed-dctcp", controller=Dctcp)   # this directory on the Python path

It does what rttlab's native DCTCP (crates/cc/src/dctcp.rs and reno.rs) does, floating-point
operation for floating-point operation, so the two give bit-identical results
(tests/test_controllers.py). Sizes are bytes, times picoseconds.
"""

import math

from rttlab import WindowController


class Dctcp(WindowController):
    # As the native DCTCP declares it: it reacts to ECN marks (PLB counts marked rounds).
    needs = {"ecn": True}
    defaults = {
        "g": 1 / 16,  # EWMA gain of the marked fraction (Linux dctcp_shift_g = 4)
        "initial_alpha": 1.0,  # α of a new connection (Linux dctcp_alpha_on_init)
        "init_cwnd": 10,  # segments (RFC 6928)
        "min_cwnd": 2,  # segments, the floor after a cut
    }

    def __init__(self, mss_bytes, params):
        super().__init__(mss_bytes, params)
        self.mss = float(mss_bytes)
        self.cwnd = self.init_cwnd * self.mss
        self.ssthresh = math.inf
        self.alpha = self.initial_alpha
        self.acked = self.marked = 0  # bytes in the current observation window
        self.window_end = 0  # snd_nxt when α was last updated
        self.cwr_end = None  # snd_nxt at the last cut: no new cut before it is acknowledged

    def on_ack(self, a):
        self.acked += a.acked_bytes
        if a.ece:
            self.marked += a.acked_bytes
        if a.snd_una >= self.window_end and self.acked > 0:  # once per window of data
            self.alpha = (1.0 - self.g) * self.alpha + self.g * (self.marked / self.acked)
            self.acked = self.marked = 0
            self.window_end = a.snd_nxt
        if self.cwr_end is not None and a.snd_una >= self.cwr_end:
            self.cwr_end = None
        if a.ece and self.cwr_end is None and not a.in_recovery:  # the first mark of a window
            self.cwnd = max(self.cwnd * (1.0 - self.alpha / 2.0), self.min_cwnd * self.mss)
            self.ssthresh = self.cwnd
            self.cwr_end = a.snd_nxt
        elif not a.ece and self.cwr_end is None and not a.in_recovery and a.cwnd_limited:
            acked = float(a.acked_bytes)  # Reno: slow start (RFC 3465, L = 2), else 1 MSS per window
            self.cwnd += min(acked, 2.0 * self.mss) if self.cwnd < self.ssthresh else self.mss * acked / self.cwnd

    def on_loss(self, loss, flight_bytes, now_ps):
        # Linux dctcp_react_to_loss: ssthresh = max(cwnd/2, 2 MSS), of the window, not the flight.
        self.ssthresh = max(int(self.cwnd) / 2.0, 2.0 * self.mss)
        self.cwnd = self.ssthresh if loss == "fast_retransmit" else self.mss

    def cwnd_bytes(self):
        return self.cwnd

    def metrics(self):
        ssthresh = int(self.ssthresh) if math.isfinite(self.ssthresh) else None
        return {"cwnd_bytes": int(self.cwnd), "ssthresh_bytes": ssthresh, "dctcp_alpha": self.alpha}
