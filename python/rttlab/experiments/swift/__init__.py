"""Swift (SIGCOMM 2020) §5 experiments on the T1 testbed, in the paper's order."""

from . import fig17, fig19, fig20, fig21, fig22, table3, table4  # noqa: F401
