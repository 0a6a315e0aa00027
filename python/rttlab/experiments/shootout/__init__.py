"""Every scheme on one fabric and workload, as the HPCC paper compares them (SIGCOMM 2019 §5.3,
Fig. 11; reference algorithms.md §9.1): FCT slowdown per flow-size bucket on a fat-tree."""

from . import fabric  # noqa: F401
