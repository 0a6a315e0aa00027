"""Figures styled for a paper: small serif-free fonts, labelled axes with units, light grids,
a colour-blind-safe palette, and the published value drawn where the paper gives one."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from typing import Any, ParamSpec, TypeVar

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

P = ParamSpec("P")
R = TypeVar("R")

#: Okabe-Ito colours, safe for colour-blind readers and in greyscale print.
PALETTE = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442", "#000000"]

STYLE = {
    "font.size": 8,
    "axes.titlesize": 8.5,
    "axes.labelsize": 8,
    "legend.fontsize": 7,
    "xtick.labelsize": 7,
    "ytick.labelsize": 7,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "grid.linewidth": 0.5,
    "lines.linewidth": 1.2,
    "lines.markersize": 4,
    "legend.frameon": False,
    "axes.prop_cycle": matplotlib.cycler(color=PALETTE),
    # A 7-inch figure is 2100 px: sharp at twice its size on the report's page (84rem wide).
    "savefig.dpi": 300,
}

#: How published values are drawn: hollow black diamonds (dashed lines for series).
PAPER = {"marker": "D", "markerfacecolor": "none", "markeredgecolor": "black", "color": "black", "markersize": 5}


def subplots(ncols: int = 2, nrows: int = 1, width: float = 7.0, height: float = 2.6) -> tuple[Any, Any]:
    """A figure for a two-column paper (7 inches wide); call it inside a `styled` function.
    Returns the figure and a flat array of axes."""
    fig, axes = plt.subplots(nrows, ncols, figsize=(width, height), constrained_layout=True, squeeze=False)
    return fig, axes.flatten()


def styled(fn: Callable[P, R]) -> Callable[P, R]:
    """Runs a plotting function inside the house style."""

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        with plt.rc_context(STYLE):
            return fn(*args, **kwargs)

    return wrapper


def mark_paper(ax: Any, x: Iterable[float], y: Iterable[float], label: str = "paper") -> None:
    """Published values as hollow black diamonds."""
    ax.plot(list(x), list(y), linestyle="none", label=label, **PAPER)


def save(fig: Any, path_stem: Any) -> None:
    """Writes PNG (for the report) and PDF (for a paper) and closes the figure."""
    fig.savefig(f"{path_stem}.png")
    fig.savefig(f"{path_stem}.pdf")
    plt.close(fig)
