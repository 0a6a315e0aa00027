"""Swift (SIGCOMM 2020) §5 experiments on the T1 testbed, in the paper's order."""

from . import fig17, table3, fig19, table4, fig20, fig21, fig22  # noqa: F401
