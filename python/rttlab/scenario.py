"""Scenarios: load TOML files or strings, apply ``key=value`` overrides, validate.

A scenario is a plain dict (the TOML tables). Validation and unit parsing happen in the Rust
core, which names the field, the value and what is allowed in a ``ValueError``.
"""

from __future__ import annotations

import copy
import datetime
import json
import math
import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import tomli_w

from . import _core, controller, presets

#: A scenario as the API takes it: a dict, a TOML file path, a preset's name, or TOML text.
ScenarioLike = Mapping[str, Any] | str | Path


def load(scenario: ScenarioLike) -> dict[str, Any]:
    """Returns the scenario as a dict: from a dict (copied), a TOML file path, a preset's name
    (``"timely-testbed"``, see `rttlab.presets`), or TOML text. A file path wins over a preset
    of the same name."""
    if isinstance(scenario, Mapping):
        return copy.deepcopy(dict(scenario))
    one_line = isinstance(scenario, str) and "\n" not in scenario and "=" not in scenario
    if isinstance(scenario, Path) or one_line:
        path = Path(scenario).expanduser()
        preset = presets.find(str(scenario)) if path.name == str(scenario) else None
        if path.is_file():
            text, base = path.read_text(), path.parent
        elif preset is not None:
            text, base = preset.read_text(), Path(str(preset)).parent
        elif path.suffix == ".toml" or path.parent != Path("."):
            raise ValueError(
                f"scenario file {str(scenario)!r} does not exist (nor is it a preset: rttlab list --scenarios)"
            )
        else:
            raise ValueError(
                f"scenario {str(scenario)!r} is neither a file nor a preset; presets: {', '.join(presets.names())}"
            )
    elif isinstance(scenario, str):
        text, base = scenario, None
    else:
        raise ValueError(f"scenario must be a dict, a TOML path or TOML text, not {type(scenario).__name__}")
    try:
        loaded = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ValueError(f"scenario is not valid TOML: {e}") from None
    except RecursionError:
        raise ValueError(f"scenario is not valid: arrays or tables nested more than {MAX_DEPTH} deep") from None
    # Files a scenario names (a topology, connection matrices) are found beside it.
    workloads = loaded.get("workloads")
    named = [loaded.get("topology"), *(workloads if isinstance(workloads, list) else [])]
    for table in named:
        if base is not None and isinstance(table, dict) and isinstance(table.get("file"), str):
            table["file"] = str(base / Path(table["file"]).expanduser())
    return loaded


#: How deep a scenario's tables and arrays may nest (the deepest schema needs 4).
MAX_DEPTH = 32


def to_json(scenario: Mapping[str, Any]) -> str:
    """The scenario as JSON text for the core. A value JSON cannot carry is an error naming its
    key: a non-finite number, a date or time, anything but tables, arrays, strings, numbers and
    booleans, or nesting deeper than `MAX_DEPTH`."""
    stack: list[tuple[str, Any, int]] = [("", scenario, 0)]
    while stack:
        where, v, depth = stack.pop()
        name = where or "scenario"
        if depth > MAX_DEPTH:
            top = where.split("[")[0].split(".")[0]
            raise ValueError(f"{top}: arrays or tables nested more than {MAX_DEPTH} deep")
        if isinstance(v, Mapping):
            stack.extend((f"{where}.{k}" if where else str(k), x, depth + 1) for k, x in v.items())
        elif isinstance(v, list | tuple):
            stack.extend((f"{where}[{i}]", x, depth + 1) for i, x in enumerate(v))
        elif isinstance(v, float) and not math.isfinite(v):
            raise ValueError(f"{name} = {v}: must be a finite number")
        elif isinstance(v, datetime.date | datetime.time):
            raise ValueError(
                f'{name} = {v}: dates and times are not scenario values; durations are strings such as "10ms"'
            )
        elif not isinstance(v, str | int | float | bool) and v is not None:
            raise ValueError(
                f"{name}: a {type(v).__name__} is not a scenario value (tables, arrays, strings, numbers, booleans)"
            )
    return json.dumps(scenario, allow_nan=False)


def parse_value(text: str) -> Any:
    """Reads an override's value as TOML (numbers, booleans, strings, arrays, inline tables); bare
    words such as ``16KB`` or ``timely`` are taken as strings, and ``null`` as None, which removes
    the key (back to its default)."""
    if text == "null":
        return None
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text


#: Tags of tables whose other keys belong to the tag's value: setting one of these to a new
#: value starts its table afresh (``--set cc.algorithm=dctcp`` drops TIMELY's ``t_low``), so the
#: new choice runs with its own defaults; later overrides of the table's keys still apply.
TAGS = ("cc.algorithm", "transport.kind", "topology.kind")


def set_key(scenario: dict[str, Any], key: str, value: Any) -> None:
    """Sets a dotted key, e.g. ``nic.segment`` or ``flows.0.connections`` (list index, also
    written ``flows[0].connections``; the index one past the end adds an entry); a value of None
    removes the key. A new value of a tag in `TAGS` replaces its whole table."""
    key = re.sub(r"\[(\d+)\]", r".\1", key)
    if key in TAGS:
        table, tag = key.split(".")
        old = scenario.get(table)
        if isinstance(old, dict) and old.get(tag) != value:
            scenario[table] = {}
    parts = key.split(".")
    node: Any = scenario
    for i, part in enumerate(parts[:-1]):
        where = ".".join(parts[: i + 1])
        if isinstance(node, list):
            node = node[_index(node, part, where)]
        elif isinstance(node, dict):
            node = node.setdefault(part, [] if parts[i + 1].isdigit() else {})
        else:
            raise ValueError(f"--set {key}: {where} is a value, not a table")
    last = parts[-1]
    if isinstance(node, list):
        node[_index(node, last, key)] = value
    elif isinstance(node, dict):
        if value is None:
            node.pop(last, None)
        else:
            node[last] = value
    else:
        raise ValueError(f"--set {key}: {'.'.join(parts[:-1])} is a value, not a table")


def _index(items: list, part: str, where: str) -> int:
    """An entry's index; one past the end appends a new table."""
    if not part.isdigit() or int(part) > len(items):
        raise ValueError(f"--set {where}: index {part!r} is not one of 0..{len(items)} ({len(items)} adds an entry)")
    if int(part) == len(items):
        items.append({})
    return int(part)


def apply_overrides(scenario: dict[str, Any], overrides: Mapping[str, Any] | None) -> dict[str, Any]:
    for key, value in (overrides or {}).items():
        set_key(scenario, key, value)
    return scenario


def to_toml(scenario: dict[str, Any]) -> str:
    """A scenario as TOML text that ``rttlab run`` reads back: keys left at None (absent
    options) are omitted, since TOML has no null."""

    def strip(v: Any) -> Any:
        if isinstance(v, dict):
            return {k: strip(x) for k, x in v.items() if x is not None}
        if isinstance(v, list):
            return [strip(x) for x in v]
        return v

    return tomli_w.dumps(strip(scenario))


def resolve(scenario: ScenarioLike, overrides: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The validated scenario with every default filled in (a Python controller's parameters
    too, `rttlab.controller.prepare`)."""
    s = apply_overrides(load(scenario), overrides)
    controller.prepare(s)
    return json.loads(_core.resolve_json(to_json(s)))
