"""What an import checks of each record before it is written (besides the manifest, which
`alpd.domain.bundles.format.BundleReader` checks): the digests the records carry.

In the order records come (`TABLES`): one thread row first, the bundle's own thread; the
snapshots from genesis, each hashing to its digest and pointing at the one before
(`verify_snapshot`), the last one the thread's context revision; every execution's policy
re-hashed to its `policy_hash` (`verify_policy`), its row's agent, runtime and kind the
policy's, and a root's binding naming this thread and a snapshot of the chain by its
digest; every checkpoint's digest over its pins; every history entry's digest over its
columns. A failure is BUNDLE_TAMPERED naming the table and the row; a record of the wrong
shape (a missing column, a wrong type) BUNDLE_INVALID.
"""

from __future__ import annotations

from collections.abc import Mapping

import msgspec

from alpd.domain.bundles.format import Header, Record
from alpd.domain.runs.policy import verify_policy
from alpd.domain.threads.context import Checkpoint, checkpoint_is_intact, verify_snapshot
from alpd.errors import (
    AlpError,
    BundleInvalid,
    BundleTampered,
    ExecutionPolicyTampered,
    ThreadContextTampered,
)
from alpd.store.entry_rows import DIGESTED_COLUMNS, entry_content, entry_digest

__all__ = ["RecordChecker"]

_checkpoint = msgspec.json.Decoder(Checkpoint)


class RecordChecker:
    """Checks one bundle's records in order (module docstring); `finish` checks the end."""

    def __init__(self, header: Header) -> None:
        self.thread_id = header.thread_id
        self.thread: dict[str, object] | None = None
        #: snapshot revision -> digest, the chain read so far
        self.chain: dict[int, str] = {}
        self.head_digest: str | None = None

    def check(self, record: Record) -> None:
        table, row = record.table, record.row
        try:
            if table == "threads":
                self._thread(row)
            elif self.thread is None:
                raise BundleInvalid(f"line {record.line}: a {table} record before the thread")
            elif table == "snapshots":
                self._snapshot(row)
            elif table == "executions":
                self._execution(row)
            elif table == "checkpoints":
                self._checkpoint(row)
            elif table == "history_entries":
                self._entry(row)
        except (KeyError, TypeError, ValueError) as exc:
            raise BundleInvalid(
                f"line {record.line}: a {table} record of the wrong shape ({exc})", table=table
            ) from exc
        except (ThreadContextTampered, ExecutionPolicyTampered) as exc:
            raise _tampered(table, record, exc) from exc

    def finish(self) -> None:
        if self.thread is None:
            raise BundleInvalid("the bundle holds no thread")
        if max(self.chain, default=-1) != self.thread["context_revision"]:
            raise BundleTampered(
                f"the thread is at context revision {self.thread['context_revision']} but "
                f"its snapshots end at {max(self.chain, default=None)}",
                what="snapshots",
            )

    def _thread(self, row: Mapping[str, object]) -> None:
        if self.thread is not None or row["id"] != self.thread_id:
            raise BundleTampered(
                f"the bundle's thread record is not the thread its header names ({self.thread_id})",
                what="threads",
            )
        if not isinstance(row["context_revision"], int) or not isinstance(row["revision"], int):
            raise TypeError("revisions are not integers")
        self.thread = dict(row)

    def _snapshot(self, row: Mapping[str, object]) -> None:
        body, digest, revision = row["body"], row["digest"], row["revision"]
        if not isinstance(body, bytes) or not isinstance(digest, str):
            raise TypeError("a snapshot's body is bytes and its digest text")
        if row["thread_id"] != self.thread_id or revision != len(self.chain):
            raise BundleTampered(
                f"snapshot {revision} is out of its thread's chain", what="snapshots"
            )
        previous = self.chain.get(len(self.chain) - 1)
        snapshot = verify_snapshot(body, digest, previous)
        if snapshot.revision != revision or snapshot.thread_id != self.thread_id:
            raise BundleTampered(f"snapshot {revision} is another one's", what="snapshots")
        self.chain[revision] = digest
        self.head_digest = digest

    def _execution(self, row: Mapping[str, object]) -> None:
        document, stored = row["policy"], row["policy_hash"]
        if not isinstance(document, bytes) or not isinstance(stored, str):
            raise TypeError("an execution's policy is bytes and its hash text")
        policy = verify_policy(document, stored)
        if (policy.agent, policy.runtime, policy.kind) != (
            row["agent"],
            row["runtime"],
            row["kind"],
        ):
            raise BundleTampered(
                f"execution {row['id']}'s columns disagree with its policy",
                what="executions",
                id=row["id"],
            )
        binding = policy.binding
        if (
            row["thread_id"] == self.thread_id
            and row["is_root"] == 1
            and binding is not None
            and (
                binding.id != self.thread_id
                or self.chain.get(binding.context_revision) != binding.context_digest
            )
        ):
            raise BundleTampered(
                f"root {row['id']} is bound to a snapshot this chain does not hold",
                what="executions",
                id=row["id"],
            )

    def _checkpoint(self, row: Mapping[str, object]) -> None:
        body = row["body"]
        if not isinstance(body, bytes):
            raise TypeError("a checkpoint's body is bytes")
        try:
            checkpoint = _checkpoint.decode(body)
        except msgspec.DecodeError as exc:
            raise ValueError("a checkpoint that does not decode") from exc
        if (
            not checkpoint_is_intact(checkpoint)
            or checkpoint.digest != row["digest"]
            or checkpoint.execution_id != row["execution_id"]
        ):
            raise BundleTampered(
                f"the checkpoint of execution {row['execution_id']} no longer matches its digest",
                what="checkpoints",
                id=row["execution_id"],
            )

    def _entry(self, row: Mapping[str, object]) -> None:
        values = [row[column] for column in DIGESTED_COLUMNS]
        if entry_digest(entry_content(values)) != row["digest"]:  # type: ignore[arg-type]
            raise BundleTampered(
                f"history entry {row['id']} no longer matches its digest",
                what="history_entries",
                id=row["id"],
            )


def _tampered(table: str, record: Record, exc: AlpError) -> BundleTampered:
    return BundleTampered(
        f"line {record.line}: a {table} record fails its digest ({exc.message})",
        what=table,
        line=record.line,
        **exc.data,
    )
