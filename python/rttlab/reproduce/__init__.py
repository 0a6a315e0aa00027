"""``rttlab reproduce TARGET``: regenerate a paper's table or figures beside the published
numbers. Each target is a module with ``reproduce(out, quick, jobs, progress, cache_dir)``."""

from __future__ import annotations

from . import timely_table1

TARGETS = {
    "timely-table1": timely_table1,
}
