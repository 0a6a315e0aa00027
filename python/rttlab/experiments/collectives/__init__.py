"""Training-cluster traffic (`rttlab reproduce collectives`): a ring all-reduce's completion
against its bandwidth-optimal time under each scheme and routing mode, two jobs contending for
one fabric, and a skewed all-to-all's incast with and without PFC."""

from . import jobs  # noqa: F401
