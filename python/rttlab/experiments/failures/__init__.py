"""Fabrics that fail (`rttlab reproduce failures`): a core link down under WebSearch load and
how long connections stall without and with PRR, and with spraying (PRR's and REPS's
headlines); one link at a quarter of its rate under ECMP, weighted ECMP, adaptive routing and
spraying; silent losses from 1e-6 to 1e-3 under DCTCP, Swift and RDMA's go-back-N against
selective repeat."""

from . import degraded, loss, outage  # noqa: F401
