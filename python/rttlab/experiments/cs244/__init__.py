"""The public reproductions of TIMELY in ``../shared/papers``, rerun with rttlab: CS244'19
"Moving Beyond Proxy Signals" (Arslan, Voss: RTT noise, TIMELY's fairness, and TIMELY's gradient
on functions of the hop-by-hop queue vector from in-band telemetry) and CS244'16 (Fang, Orbay:
TIMELY, an oracle fed the true queues, and Vegas on an 11-host star), with HPCC beside TIMELY."""

from . import clos, hpcc, noise, skinny, star  # noqa: F401
