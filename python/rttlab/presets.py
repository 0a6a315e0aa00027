"""The scenarios shipped with rttlab, as package data (``rttlab/scenarios/*.toml``, also at
``scenarios/`` in the repository): found by name, so ``rttlab run timely-testbed`` and
``rttlab reproduce`` work from an installed wheel, and listed with their descriptions
(``rttlab list --scenarios``)."""

from __future__ import annotations

import re
import tomllib
from importlib import resources
from importlib.resources.abc import Traversable
from typing import Any

#: A full stop ending a sentence (not "Fig. 5", "et al. 2016", "e.g. x").
_SENTENCE_END = re.compile(r"(?<!Fig)(?<!al)(?<!e\.g)(?<!i\.e)\. (?=[A-Z`])")


def _dir() -> Traversable:
    return resources.files("rttlab") / "scenarios"


def names() -> list[str]:
    """The presets' names (file names without ``.toml``), sorted."""
    return sorted(p.name.removesuffix(".toml") for p in _dir().iterdir() if p.name.endswith(".toml"))


def find(name: str) -> Traversable | None:
    """The preset called ``name`` (with or without ``.toml``), or None."""
    stem = name.removesuffix(".toml")
    return _dir() / f"{stem}.toml" if stem in names() else None


def text(name: str) -> str:
    """A preset's TOML text; ``ValueError`` listing the presets if there is none of that name."""
    p = find(name)
    if p is None:
        raise ValueError(f"scenario {name!r} is not a preset; presets: {', '.join(names())}")
    return p.read_text()


def load(name: str) -> dict[str, Any]:
    return tomllib.loads(text(name))


def description(name: str) -> str:
    """The first sentence of a preset's leading comment, on one line."""
    lines = []
    for line in text(name).splitlines():
        if not line.startswith("#"):
            break
        lines.append(line.lstrip("#").strip())
    words = " ".join(lines)
    end = _SENTENCE_END.search(words)
    first = words if end is None else words[: end.start() + 1]
    return first if len(first) <= 110 else first[:109].rstrip() + "…"
