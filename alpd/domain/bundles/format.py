"""The thread bundle's lines: a header, one record a line, the manifest last (sans-IO).

A bundle is gzip'd JSON Lines (the gzip is the service's business; this module sees the
lines). In order:

1. the **header**: ``{"alpBundle": 1, "alpVersion": …, "threadId": …, "exportedAt": …}``;
   a reader refuses another ``alpBundle`` version (BUNDLE_INVALID);
2. **records**, ``{"table": NAME, "row": {column: value}}``, a table's records together, in
   the order the tables are written (`TABLES`); a value is a JSON scalar, or
   ``{"$b64": …}`` for bytes (a policy document, a snapshot's body);
3. the **manifest**: ``{"manifest": {"counts": {table: n}, "digests": {table: sha256 of
   that table's record lines}, "records": sha256 of every record line in order,
   "header": sha256 of the header line}}``.

Every digest is over the lines' bytes as written (each with its newline), so a changed byte
anywhere in a record changes its table's digest and the records' digest. A reader hashes a
line before it decodes it: a line that no longer decodes is still counted against the
manifest, and `BundleReader.finish` says BUNDLE_TAMPERED (naming the table whose digest
failed) rather than BUNDLE_INVALID when the manifest itself is intact and disagrees.

Nothing is signed: a person who rewrites records and recomputes the manifest passes this
check; the records' own digests (snapshot chain, policy hashes, checkpoints, history
entries: `alpd.services.bundles.checks`) are what such an edit then meets.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Mapping
from typing import Final, NamedTuple

import msgspec

from alpd.errors import BundleInvalid, BundleTampered

__all__ = [
    "FORMAT_VERSION",
    "MAX_LINE_BYTES",
    "TABLES",
    "BundleReader",
    "BundleWriter",
    "Header",
    "Record",
    "Value",
]

FORMAT_VERSION: Final = 1
#: a line longer than this is BUNDLE_INVALID: no record alp writes comes near it (a snapshot
#: is capped at 32 KiB, a history entry's text at what the runtime wrote in one message)
MAX_LINE_BYTES: Final = 32 * 1024 * 1024

#: the tables a bundle carries, in the order they are written and must be read
TABLES: Final = (
    "threads",
    "thread_revisions",
    "snapshots",
    "compactions",
    "context_steps",
    "executions",
    "checkpoints",
    "root_derived",
    "root_memories",
    "history_entries",
    "deliveries",
    "reports",
    "handoffs",
)

Value = str | int | float | bytes | None


class Header(NamedTuple):
    version: int
    alp_version: str
    thread_id: str
    exported_at: str


class Record(NamedTuple):
    table: str
    row: dict[str, Value]
    #: the record's line number in the bundle (the header is line 1), for messages
    line: int


def _digest(hasher: hashlib._Hash) -> str:
    return "sha256:" + hasher.hexdigest()


def _encode_value(value: Value) -> object:
    if isinstance(value, bytes):
        return {"$b64": base64.b64encode(value).decode("ascii")}
    return value


def _decode_value(value: object, where: str) -> Value:
    if value is None or isinstance(value, str | int | float):
        return value
    if isinstance(value, dict) and set(value) == {"$b64"} and isinstance(value["$b64"], str):
        try:
            return base64.b64decode(value["$b64"], validate=True)
        except ValueError as exc:
            raise BundleInvalid(f"{where}: a bytes value is not base64") from exc
    raise BundleInvalid(f"{where}: a value is neither a JSON scalar nor bytes")


class BundleWriter:
    """The lines of one bundle, in order: `header`, `record` for each row, `manifest`."""

    def __init__(self) -> None:
        self._tables: dict[str, hashlib._Hash] = {}
        self._counts: dict[str, int] = {}
        self._records = hashlib.sha256()
        self._header: bytes | None = None
        self._table_at = -1

    def header(self, *, alp_version: str, thread_id: str, exported_at: str) -> bytes:
        line = msgspec.json.encode(
            {
                "alpBundle": FORMAT_VERSION,
                "alpVersion": alp_version,
                "threadId": thread_id,
                "exportedAt": exported_at,
            }
        )
        self._header = line + b"\n"
        return self._header

    def record(self, table: str, row: Mapping[str, Value]) -> bytes:
        """One record's line; tables must come in `TABLES` order, each one's rows together."""
        at = TABLES.index(table)
        if at < self._table_at:
            raise ValueError(f"table {table} written after a later one")
        self._table_at = at
        line = (
            msgspec.json.encode(
                {"table": table, "row": {k: _encode_value(v) for k, v in row.items()}}
            )
            + b"\n"
        )
        self._tables.setdefault(table, hashlib.sha256()).update(line)
        self._counts[table] = self._counts.get(table, 0) + 1
        self._records.update(line)
        return line

    @property
    def counts(self) -> dict[str, int]:
        return dict(self._counts)

    def manifest(self) -> bytes:
        if self._header is None:
            raise ValueError("the header comes first")
        manifest = {
            "counts": self._counts,
            "digests": {table: _digest(h) for table, h in self._tables.items()},
            "records": _digest(self._records),
            "header": _digest(hashlib.sha256(self._header)),
        }
        return msgspec.json.encode({"manifest": manifest}) + b"\n"


class _Manifest(msgspec.Struct, frozen=True):
    counts: dict[str, int]
    digests: dict[str, str]
    records: str
    header: str


class _ManifestLine(msgspec.Struct, frozen=True):
    manifest: _Manifest


class BundleReader:
    """Reads a bundle's lines back: `header` first, then `line` for each line after it
    (records, then the manifest), then `finish`.

    `line` returns a Record, or None for the manifest. A record line that does not decode
    is remembered, not raised at once (`broken`): the caller stops using records and reads
    on, and `finish` tells a tampered bundle (the manifest disagrees) from a malformed one.
    """

    def __init__(self, max_line_bytes: int = MAX_LINE_BYTES) -> None:
        self.max_line_bytes = max_line_bytes
        self._tables: dict[str, hashlib._Hash] = {}
        self._counts: dict[str, int] = {}
        self._records = hashlib.sha256()
        self._header_digest: str | None = None
        self._manifest: _Manifest | None = None
        self._line_no = 1
        self._table_at = -1
        #: the first record line that could not be read, and why
        self.broken: BundleInvalid | None = None

    def header(self, line: bytes) -> Header:
        self._check_length(line)
        self._header_digest = _digest(hashlib.sha256(line))
        try:
            head = msgspec.json.decode(line, type=dict[str, object])
        except msgspec.DecodeError as exc:
            raise BundleInvalid("not a thread bundle: its first line is not JSON") from exc
        version = head.get("alpBundle")
        if not isinstance(version, int):
            raise BundleInvalid("not a thread bundle: its first line has no alpBundle version")
        if version != FORMAT_VERSION:
            raise BundleInvalid(
                f"bundle format {version}; this alp reads format {FORMAT_VERSION} "
                "(upgrade alp to read a newer bundle)",
                version=version,
            )
        fields = [head.get(name) for name in ("alpVersion", "threadId", "exportedAt")]
        if not all(isinstance(value, str) and value for value in fields):
            raise BundleInvalid("the bundle's header lacks alpVersion, threadId or exportedAt")
        return Header(version, str(fields[0]), str(fields[1]), str(fields[2]))

    def line(self, line: bytes) -> Record | None:
        self._line_no += 1
        where = f"line {self._line_no}"
        self._check_length(line)
        if self._manifest is not None:
            raise BundleInvalid(f"{where}: a line after the manifest")
        if line.startswith(b'{"manifest"'):
            try:
                self._manifest = msgspec.json.decode(line, type=_ManifestLine).manifest
            except (msgspec.DecodeError, msgspec.ValidationError) as exc:
                raise BundleInvalid(f"{where}: the manifest is not readable") from exc
            return None
        self._records.update(line)
        try:
            record = self._record(line, where)
        except BundleInvalid as exc:
            self.broken = self.broken or exc
            return None
        self._tables.setdefault(record.table, hashlib.sha256()).update(line)
        self._counts[record.table] = self._counts.get(record.table, 0) + 1
        return record

    def _record(self, line: bytes, where: str) -> Record:
        try:
            raw = msgspec.json.decode(line, type=dict[str, object])
        except msgspec.DecodeError as exc:
            raise BundleInvalid(f"{where}: not JSON") from exc
        table, row = raw.get("table"), raw.get("row")
        if set(raw) != {"table", "row"} or table not in TABLES or not isinstance(row, dict):
            raise BundleInvalid(f"{where}: not a record of a table a bundle carries")
        assert isinstance(table, str)
        at = TABLES.index(table)
        if at < self._table_at:
            raise BundleInvalid(f"{where}: a {table} record after the tables that follow it")
        self._table_at = at
        values = {str(k): _decode_value(v, f"{where} ({table}.{k})") for k, v in row.items()}
        return Record(table, values, self._line_no)

    def finish(self) -> dict[str, int]:
        """The manifest checked against what was read: the counts by table.

        BUNDLE_INVALID without a manifest (a truncated file) or with a broken record line
        under a manifest that agrees; BUNDLE_TAMPERED naming the first table (or the header,
        or a record that no longer decodes) whose digest or count disagrees."""
        manifest = self._manifest
        if manifest is None:
            raise BundleInvalid("the bundle ends before its manifest (a truncated file?)")
        if manifest.header != self._header_digest:
            raise BundleTampered("the bundle's header was changed", what="header")
        for table in TABLES:
            expected = manifest.digests.get(table)
            hasher = self._tables.get(table)
            got = _digest(hasher) if hasher is not None else None
            if expected != got or manifest.counts.get(table, 0) != self._counts.get(table, 0):
                raise BundleTampered(
                    f"the bundle's {table} records do not match its manifest "
                    f"({self._counts.get(table, 0)} read, {manifest.counts.get(table, 0)} listed)",
                    what=table,
                )
        if manifest.records != _digest(self._records) or set(manifest.counts) - set(TABLES):
            raise BundleTampered(
                "the bundle's records do not match its manifest"
                + (f" ({self.broken.message})" if self.broken else ""),
                what="records",
            )
        if self.broken is not None:
            raise self.broken
        return dict(self._counts)

    def _check_length(self, line: bytes) -> None:
        if len(line) > self.max_line_bytes or not line.endswith(b"\n"):
            raise BundleInvalid(
                f"line {self._line_no} is longer than {self.max_line_bytes} bytes, or the "
                "file ends inside it",
                limit=self.max_line_bytes,
            )
