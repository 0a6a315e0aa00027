"""TIMELY (SIGCOMM 2015) §4.4 and §6.1 small-scale and §6.2 large-scale experiments, in the paper's order."""

from . import (
    fig09,
    fig10,
    fig12,
    fig13,
    fig14,
    fig15,
    fig16,
    fig17,
    fig18,
    fig19,
    fig20,
    fig21,
    fig22,
    patched_fairness,
    table1,
)

__all__ = [
    "fig09",
    "fig10",
    "fig12",
    "fig13",
    "fig14",
    "fig15",
    "fig16",
    "fig17",
    "fig18",
    "fig19",
    "fig20",
    "fig21",
    "fig22",
    "patched_fairness",
    "table1",
]
