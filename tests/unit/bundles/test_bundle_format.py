"""The bundle's lines (alpd/domain/bundles/format.py): what is written reads back the same,
and a changed byte anywhere in the records is never read as the bundle it was."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from alpd.domain.bundles.format import TABLES, BundleReader, BundleWriter, Record
from alpd.errors import BundleInvalid, BundleTampered

scalars = st.one_of(
    st.none(),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.text(max_size=40),
    st.binary(max_size=40),
    st.floats(allow_nan=False, allow_infinity=False),
)
rows = st.dictionaries(st.sampled_from(["id", "body", "digest", "text", "n"]), scalars, max_size=5)
records = st.lists(st.tuples(st.sampled_from(TABLES), rows), min_size=1, max_size=12).map(
    lambda rs: sorted(rs, key=lambda r: TABLES.index(r[0]))
)


def write(rows: list[tuple[str, dict[str, object]]]) -> list[bytes]:
    writer = BundleWriter()
    lines = [writer.header(alp_version="0.1.0", thread_id="thread_x", exported_at="t")]
    lines += [writer.record(table, row) for table, row in rows]  # type: ignore[arg-type]
    return [*lines, writer.manifest()]


def split_lines(data: bytes) -> list[bytes]:
    """As the service reads them: each line up to and with its newline."""
    parts = data.split(b"\n")
    return [part + b"\n" for part in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def read(lines: list[bytes]) -> tuple[list[Record], dict[str, int]]:
    reader = BundleReader()
    reader.header(lines[0])
    got = [r for r in (reader.line(line) for line in lines[1:]) if r is not None]
    return got, reader.finish()


@given(records)
def test_what_is_written_reads_back_the_same(rows: list[tuple[str, dict[str, object]]]) -> None:
    got, counts = read(write(rows))
    assert [(r.table, r.row) for r in got] == rows
    assert sum(counts.values()) == len(rows)


@settings(max_examples=300)
@given(records, st.data())
def test_any_changed_byte_of_the_records_is_refused(
    rows: list[tuple[str, dict[str, object]]], data: st.DataObject
) -> None:
    lines = write(rows)
    body = bytearray(b"".join(lines[1:-1]))
    at = data.draw(st.integers(0, len(body) - 1))
    body[at] = data.draw(st.integers(0, 255).filter(lambda b: b != body[at]))
    was_newline = lines_changed = b"".join(lines[1:-1])[at] == ord("\n")
    changed = [lines[0], *split_lines(bytes(body)), lines[-1]]
    with pytest.raises((BundleTampered, BundleInvalid)) as info:
        read(changed)
    # Only a change of the newline that ends the records (the manifest then reads as part of
    # the last record) may read as malformed: every other change is called tampered.
    if isinstance(info.value, BundleInvalid):
        assert was_newline and lines_changed


@given(records)
def test_a_changed_record_under_its_manifest_names_its_table(
    rows: list[tuple[str, dict[str, object]]],
) -> None:
    lines = write(rows)
    lines[1] = lines[1].replace(b'"row":{', b'"row":{"extra":1,', 1)
    with pytest.raises(BundleTampered) as info:
        read(lines)
    assert info.value.data["what"] == rows[0][0]


def test_a_bundle_without_its_manifest_is_invalid() -> None:
    lines = write([("threads", {"id": "thread_x"})])
    with pytest.raises(BundleInvalid, match="truncated"):
        read(lines[:-1])


def test_another_format_version_is_invalid() -> None:
    with pytest.raises(BundleInvalid, match="format 2"):
        BundleReader().header(b'{"alpBundle": 2}\n')


def test_a_line_over_the_cap_is_invalid_and_names_the_limit() -> None:
    reader = BundleReader(max_line_bytes=80)
    reader.header(b'{"alpBundle":1,"alpVersion":"v","threadId":"t","exportedAt":"x"}\n')
    with pytest.raises(BundleInvalid) as info:
        reader.line(b'{"table":"threads","row":{"id":"' + b"x" * 100 + b'"}}\n')
    assert info.value.data["limit"] == 80


def test_records_out_of_table_order_are_refused() -> None:
    writer = BundleWriter()
    writer.header(alp_version="v", thread_id="t", exported_at="x")
    writer.record("snapshots", {})
    with pytest.raises(ValueError, match="after a later one"):
        writer.record("threads", {})
