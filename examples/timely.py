"""TIMELY's rate computation engine (Mittal et al., SIGCOMM 2015, Algorithm 1 and §5) as a
Python controller for rttlab.

    rttlab.run("timely-testbed", controller=Timely)        # this directory on the Python path
    rttlab run timely-testbed --set cc.algorithm=python --set cc.class=timely:Timely

It does what rttlab's native TIMELY (crates/cc/src/timely.rs) does with its default options,
floating-point operation for floating-point operation, so the two give bit-identical results
(tests/test_controllers.py checks it on the §6.1 testbed). Times are picoseconds, rates bit/s.
"""

from rttlab import RateController


class Timely(RateController):
    defaults = {
        "alpha": 0.02,  # EWMA weight of a new RTT difference (the authors' code; the paper gives none)
        "beta": 0.8,  # multiplicative decrement factor
        "delta_bps": 10_000_000,  # additive increment δ: 10 Mbps
        "t_low_ps": 50_000_000,  # 50 µs
        "t_high_ps": 500_000_000,  # 500 µs
        "min_rtt_ps": 20_000_000,  # the fixed minimum RTT that normalises the gradient
        "hai_threshold": 5,  # completions with a negative gradient before HAI
        "hai_factor": 5.0,  # HAI's increment multiplier N
        "min_rate_bps": 10_000_000,  # a floor: the gradient decrease can exceed the rate
        "app_limited_fraction": 0.8,  # §5: grow only while sending at more than 80 % of the rate
    }

    @classmethod
    def validate(cls, p):
        if not 0 < p["alpha"] <= 1:
            raise ValueError(f"cc.alpha: {p['alpha']}: an EWMA weight in (0, 1]")
        if p["t_low_ps"] > p["t_high_ps"]:
            raise ValueError(f"cc.t_low_ps: {p['t_low_ps']}: must not exceed t_high_ps ({p['t_high_ps']})")
        if p["min_rtt_ps"] <= 0 or p["min_rate_bps"] <= 0:
            raise ValueError("cc.min_rtt_ps and cc.min_rate_bps: must be positive")

    def __init__(self, line_rate_bps, params):
        super().__init__(line_rate_bps, params)  # each parameter becomes an attribute
        self.rate = float(line_rate_bps)  # a new flow starts at line rate, which is also the cap (§5)
        self.prev_rtt = None
        self.rtt_diff = 0.0
        self.hai_count = 0
        self.last_update = None

    def on_completion(self, c):
        # Algorithm 1, lines 1-4: the RTT difference, smoothed, normalised by the minimum RTT.
        new_rtt = float(c.rtt_ps)
        new_rtt_diff = new_rtt - (new_rtt if self.prev_rtt is None else self.prev_rtt)
        self.prev_rtt = new_rtt
        self.rtt_diff = (1.0 - self.alpha) * self.rtt_diff + self.alpha * new_rtt_diff
        gradient = self.rtt_diff / float(self.min_rtt_ps)
        # §5 "Rate update frequency": an update weighs df = min(time since the last / min RTT, 1).
        df = (
            1.0
            if self.last_update is None
            else min(float(max(c.now_ps - self.last_update, 0)) / float(self.min_rtt_ps), 1.0)
        )
        self.last_update = c.now_ps
        # HAI counts completions whose gradient is negative, whatever branch the RTT takes.
        self.hai_count = self.hai_count + 1 if gradient < 0.0 else 0
        delta = float(self.delta_bps)
        old = self.rate
        if c.rtt_ps < self.t_low_ps:  # lines 5-7: additive increase
            new = old + 1.0 * delta * df
        elif c.rtt_ps > self.t_high_ps:  # lines 8-10: decrease on the RTT itself
            new = old * (1.0 - df * self.beta * (1.0 - float(self.t_high_ps) / new_rtt))
        elif gradient <= 0.0:  # lines 11-14: increase, N·δ once HAI is on
            n = self.hai_factor if self.hai_count >= self.hai_threshold else 1.0
            new = old + n * delta * df
        else:  # line 16: decrease in proportion to the gradient
            new = old * (1.0 - df * self.beta * gradient)
        new = max(new, 0.5 * old)  # the authors' code: never below half the rate in one update
        if (
            new > old
            and c.sending_rate_bps is not None
            and float(c.sending_rate_bps) <= self.app_limited_fraction * old
        ):
            new = old  # §5 "Application limited behavior"
        self.rate = max(min(new, float(self.line_rate_bps)), float(self.min_rate_bps))

    def rate_bps(self):
        return self.rate

    def metrics(self):
        return {"rate_bps": self.rate, "at_min_rate": self.rate <= float(self.min_rate_bps)}
