"""The kernel programs' record has one definition, ``rttlab.host.logs.FIELDS``: the C header's
``struct rttlab_event`` (its fields, their types, order and comments), its kinds, the Python
decoder and the Rust replay's ``Records`` are checked against it, so that none drifts."""

import re
from pathlib import Path

from rttlab.host import logs

ROOT = Path(__file__).resolve().parents[1]
HEADER = (ROOT / "python/rttlab/host/bpf/rttlab.h").read_text()
REPLAY = (ROOT / "crates/py/src/replay.rs").read_text()
RUST_TYPES = {"<u8": "u64", "<i8": "i64", "<u4": "u32", "<u2": "u16"}


def test_the_headers_struct_is_the_schema_field_for_field_with_its_descriptions():
    body = re.search(r"struct rttlab_event \{\n(.*?)\n\};", HEADER, re.S).group(1)
    fields = [re.fullmatch(r"\t(\w+) (\w+);\t/\* (.*) \*/", line).groups() for line in body.splitlines()]
    assert fields == [(c, name, description) for name, _, c, description in logs.FIELDS]
    assert "_Static_assert(sizeof(struct rttlab_event) == 56" in HEADER


def test_the_headers_kinds_are_the_schemas():
    enum = re.search(r"enum \{ (EV_INIT.*?) \};", HEADER).group(1)
    assert {k: int(v) for k, v in re.findall(r"(EV_\w+) = (\d+)", enum)} == logs.KINDS


def test_the_decoder_reads_the_schema_in_56_bytes():
    assert logs.EVENT.names == tuple(name for name, *_ in logs.FIELDS)
    assert logs.EVENT.itemsize == 56
    offsets = [logs.EVENT.fields[name][1] for name in logs.EVENT.names]
    assert offsets == [0, 8, 12, 14, 16, 24, 32, 40, 48]


def test_the_rust_replay_takes_every_field_but_the_connections_in_the_schemas_order_and_types():
    body = re.search(r"pub struct Records<'a> \{\n(.*?)\n\}", REPLAY, re.S).group(1)
    fields = re.findall(r"pub (\w+): &'a \[(\w+)\],", body)
    assert fields == [(name, RUST_TYPES[numpy]) for name, numpy, _, _ in logs.FIELDS if name != "port"]
    kinds = dict(re.findall(r"const (\w+): u16 = (\d+);", REPLAY))
    assert {f"EV_{k}": int(v) for k, v in kinds.items()} == logs.KINDS
