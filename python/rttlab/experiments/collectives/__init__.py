"""Training-cluster traffic (`rttlab reproduce collectives`): a ring all-reduce's completion
against its bandwidth-optimal time under each scheme and routing mode, and two jobs contending
for one fabric."""

from . import jobs  # noqa: F401
