"""One workspace's shadow repository: a git directory under `$ALP_HOME/checkpoints/` that
holds checkpoints of the workspace's files, written with the `git` CLI.

Every git command runs with `GIT_DIR` at the shadow repository, `GIT_WORK_TREE` at the
workspace and `GIT_INDEX_FILE` at an index of alp's own, and with no global or system config,
so nothing is ever written to the workspace's own repository — its index, refs, stash, hooks
and config stay as they are — and no user setting (an fsmonitor, a hook, signing) runs. Where
the workspace is a git repository, the shadow repository borrows its objects (git alternates,
read-only), so a checkpoint stores only what the workspace's repository does not already
have, and its first index is a copy of the workspace's (so unchanged files are not hashed
again). A plain directory works the same, with nothing to borrow.

What a checkpoint leaves out, and says so in its note: files over `max_file_bytes`, nested
repositories (a directory with its own `.git`), unreadable files. Ignored files are never
looked at: the workspace's `.gitignore` files, its `.git/info/exclude`, and alp's own rules
(`$ALP_HOME/checkpoints/ignore`, written with defaults on first use, the person's to edit).

Git runs as a subprocess of the event loop (anyio), never in a worker thread or a database
transaction; each repository is used by one operation at a time (`lock`).
"""

# long: one git repository's whole life (make, borrow, snapshot, diff, restore, prune) in one
# class, because every step shares its environment and its lock.

from __future__ import annotations

import hashlib
import os
import re
import shutil
import stat
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import anyio
import structlog

from alpd.domain.checkpoints.entries import (
    REF_ROOT,
    Entry,
    Note,
    Skipped,
    cap_skipped,
    decode_note,
    encode_note,
    parse_ref,
)

log = structlog.get_logger("alpd.checkpoints")

#: a git command that takes longer than this is killed (a hung NFS mount must not hold a root)
GIT_TIMEOUT: Final = 300.0
#: the file beside the repository naming the workspace it checkpoints
WORKSPACE_FILE: Final = "alp-workspace"
INDEX_FILE: Final = "alp-index"
#: alp's own ignore rules, created on first use
DEFAULT_IGNORE: Final = """\
# Files alp's checkpoints leave out, in .gitignore syntax; the workspace's own .gitignore
# files and .git/info/exclude are honoured as well. Edit freely: read at every checkpoint.
node_modules/
.venv/
venv/
__pycache__/
*.pyc
.mypy_cache/
.pytest_cache/
.ruff_cache/
.tox/
.DS_Store
"""
_REPO_CONFIG: Final = (
    ("core.bare", "false"),
    ("core.logAllRefUpdates", "false"),
    ("core.autocrlf", "false"),
    ("core.symlinks", "true"),
    ("core.quotePath", "false"),
    ("core.fsmonitor", "false"),
    ("core.untrackedCache", "true"),
    ("gc.auto", "0"),
    ("user.name", "alp"),
    ("user.email", "alp@localhost"),
)
_UNREADABLE = re.compile(r"""error: open\("(.+)"\): """)
#: at most this many paths ignored by the rules above a subfolder workspace are excluded by
#: name (a fully ignored directory is one path); past it the rest are checkpointed
MAX_IGNORED_ABOVE: Final = 10_000
_GLOB = re.compile(r"([\\*?\[\]])")


class GitFailed(Exception):
    """A git command of a checkpoint failed; the message is its stderr, cut."""


@dataclass(frozen=True, slots=True)
class Snapshot:
    commit: str
    tree: str
    skipped: tuple[Skipped, ...]
    skipped_more: int
    seconds: float


def repo_name(workspace: str) -> str:
    """`<basename>-<12 hex of the path's sha256>.git`: readable, one per workspace."""
    digest = hashlib.sha256(workspace.encode()).hexdigest()[:12]
    base = re.sub(r"[^A-Za-z0-9._-]", "_", os.path.basename(workspace.rstrip("/")) or "root")
    return f"{base[:40]}-{digest}.git"


def _git_env(**extra: str) -> dict[str, str]:
    """No inherited GIT_* variable, no global or system config, a C locale."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "LC_ALL": "C",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_OPTIONAL_LOCKS": "0",
    }
    env.update(extra)
    return env


def _repository_above(workspace: str) -> str | None:
    """The top of the git repository holding `workspace` when it is above it (a subfolder
    workspace); None at a repository's top or outside any."""
    start = Path(os.path.realpath(workspace))
    if (start / ".git").exists():
        return None
    for candidate in start.parents:
        if (candidate / ".git").exists():
            return str(candidate)
    return None


def _literal_rule(path: str) -> str:
    """A .gitignore rule matching exactly `path` (relative to the work tree; `dir/` for a
    directory): anchored, its glob characters and trailing spaces escaped."""
    body = _GLOB.sub(r"\\\1", path)
    stripped = body.rstrip(" ")
    return "/" + stripped + "\\ " * (len(body) - len(stripped))


def _write_private(path: Path, data: bytes) -> None:
    """`data` in `path`, mode 0600 whatever the umask (the home's files are the owner's)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as file:
        file.write(data)
    os.chmod(path, 0o600)


class ShadowRepo:
    def __init__(self, root: Path, workspace: str) -> None:
        self.root = root
        self.workspace = workspace
        self.path = root / repo_name(workspace)
        self.index = self.path / INDEX_FILE
        self.lock = anyio.Lock()

    # running git

    def env(self, index: Path | None = None) -> dict[str, str]:
        return _git_env(
            GIT_DIR=str(self.path),
            GIT_WORK_TREE=self.workspace,
            GIT_INDEX_FILE=str(index or self.index),
        )

    async def git(
        self,
        *args: str,
        stdin: bytes | None = None,
        index: Path | None = None,
        env: dict[str, str] | None = None,
        ok: Sequence[int] = (0,),
    ) -> bytes:
        with anyio.fail_after(GIT_TIMEOUT):
            done = await anyio.run_process(
                ["git", *args],
                input=stdin,
                env=env or self.env(index),
                cwd=self.workspace if os.path.isdir(self.workspace) else str(self.root),
                check=False,
            )
        if done.returncode not in ok:
            error = done.stderr.decode(errors="replace").strip()[-2000:]
            raise GitFailed(f"git {args[0]} exited {done.returncode}: {error}")
        return done.stdout

    async def git_capped(self, args: Sequence[str], limit: int) -> tuple[bytes, bool]:
        """stdout of git cut at `limit` bytes (the process is ended past it), and whether
        it was cut."""
        chunks: list[bytes] = []
        size = 0
        cut = False
        with anyio.fail_after(GIT_TIMEOUT):
            async with await anyio.open_process(
                ["git", *args], env=self.env(), stderr=None
            ) as process:
                assert process.stdout is not None
                async for chunk in process.stdout:
                    chunks.append(chunk)
                    size += len(chunk)
                    if size > limit:
                        cut = True
                        process.kill()
                        break
        data = b"".join(chunks)
        return data[:limit], cut

    # the repository

    async def ensure(self, ignore_file: Path) -> None:
        """Create the repository on first use (idempotent), borrow the workspace's objects,
        and refresh the ignore rules."""
        if not (self.path / "HEAD").exists():
            self.root.mkdir(parents=True, exist_ok=True)
            os.chmod(self.root, 0o700)
            partial = self.path.with_name(self.path.name + f".new-{os.getpid()}")
            shutil.rmtree(partial, ignore_errors=True)
            # 0600 files and 0700 directories, like everything in the home (git applies it)
            await self.git(
                "init",
                "--bare",
                "--quiet",
                "--shared=0600",
                "--template=",
                str(partial),
                env=_git_env(),
            )
            for key, value in _REPO_CONFIG:
                await self.git("config", key, value, env=_git_env(GIT_DIR=str(partial)))
            _write_private(partial / WORKSPACE_FILE, (self.workspace + "\n").encode())
            await self._borrow_objects(partial)
            os.replace(partial, self.path)
        await self._write_excludes(ignore_file)

    async def _workspace_git(self, *args: str) -> str | None:
        """A read-only question to the workspace's own repository (None when it is none)."""
        if not os.path.exists(os.path.join(self.workspace, ".git")):
            return None
        with anyio.fail_after(GIT_TIMEOUT):
            done = await anyio.run_process(
                ["git", "-C", self.workspace, *args],
                env=_git_env(),
                check=False,
            )
        if done.returncode != 0:
            return None
        return done.stdout.decode().strip() or None

    async def _borrow_objects(self, repo: Path) -> None:
        common = await self._workspace_git("rev-parse", "--git-common-dir")
        if common is None:
            return
        objects = Path(self.workspace, common).resolve() / "objects"
        if objects.is_dir():
            (repo / "objects" / "info").mkdir(mode=0o700, parents=True, exist_ok=True)
            _write_private(repo / "objects" / "info" / "alternates", f"{objects}\n".encode())
            # Its index, copied: stat data of files the workspace's repository has hashed.
            git_dir = await self._workspace_git("rev-parse", "--absolute-git-dir")
            index = Path(git_dir or "", "index")
            if git_dir and index.is_file():
                _write_private(repo / INDEX_FILE, index.read_bytes())

    async def _write_excludes(self, ignore_file: Path) -> None:
        if not ignore_file.exists():
            _write_private(ignore_file, DEFAULT_IGNORE.encode())
        parts = [ignore_file.read_bytes()]
        theirs = Path(self.workspace, ".git", "info", "exclude")
        if theirs.is_file():
            parts.append(theirs.read_bytes())
        parts.append(await self._ignored_above())
        wanted = b"\n".join(parts)
        exclude = self.path / "info" / "exclude"
        exclude.parent.mkdir(mode=0o700, exist_ok=True)
        if not exclude.exists() or exclude.read_bytes() != wanted:
            _write_private(exclude, wanted)

    async def _ignored_above(self) -> bytes:
        """Where the workspace is a subfolder of a git repository, the rules above it (the
        `.gitignore` files of its parent directories, the repository's `info/exclude`) are
        outside the shadow repository's work tree, so git would not read them: the paths in
        the workspace that the repository ignores, asked of it (read-only: `ls-files` of the
        untracked ignored files, a wholly ignored directory as one), become anchored literal
        rules. Asked again at every checkpoint, so a new rule or a new ignored file counts."""
        top = _repository_above(self.workspace)
        if top is None:
            return b""
        with anyio.fail_after(GIT_TIMEOUT):
            done = await anyio.run_process(
                ["git", "ls-files", "-z", "--others", "--ignored", "--exclude-standard",
                 "--directory"],
                env=_git_env(),
                cwd=self.workspace,
                check=False,
            )  # fmt: skip
        if done.returncode != 0:
            log.warning("checkpoint_ignores_above_failed", workspace=self.workspace)
            return b""
        paths = [p for p in done.stdout.decode("utf-8", "surrogateescape").split("\0") if p]
        if len(paths) > MAX_IGNORED_ABOVE:
            log.warning("checkpoint_ignores_above_cut", workspace=self.workspace, found=len(paths))
        rules = [_literal_rule(p) for p in paths[:MAX_IGNORED_ABOVE] if "\n" not in p]
        head = f"# ignored by the rules of {top} above this workspace\n"
        return (head + "".join(rule + "\n" for rule in rules)).encode("utf-8", "surrogateescape")

    # checkpoints

    async def snapshot(self, note: Note, max_file_bytes: int, ref: str | None) -> Snapshot:
        """A commit of the workspace's files as they are now (module docstring for what is
        left out); `ref` is pointed at it when given."""
        started = time.perf_counter()
        skipped = await self._left_out(max_file_bytes)
        excluded = [s.path for s in skipped]
        if excluded:
            await self.git(
                "update-index",
                "--force-remove",
                "-z",
                "--stdin",
                stdin=b"".join(p.rstrip("/").encode() + b"\0" for p in excluded),
            )
        pathspec = b".\0" + b"".join(b":(exclude,literal)" + p.encode() + b"\0" for p in excluded)
        try:
            errors = await self._add(pathspec)
        except GitFailed:
            if not self.index.exists():
                raise
            # A copied index git cannot use here (a split or sparse index): start afresh.
            self.index.unlink()
            errors = await self._add(pathspec)
        skipped.extend(Skipped(path, "unreadable") for path in errors)
        tree = (await self.git("write-tree")).decode().strip()
        named, more = cap_skipped(skipped)
        seconds = round(time.perf_counter() - started, 4)
        note = Note(
            thread_id=note.thread_id,
            step=note.step,
            phase=note.phase,
            at=note.at,
            workspace=self.workspace,
            seconds=seconds,
            skipped=named,
            skipped_more=more,
        )
        commit = (
            (await self.git("commit-tree", tree, stdin=encode_note(note).encode())).decode().strip()
        )
        if ref is not None:
            await self.git("update-ref", ref, commit)
        return Snapshot(commit, tree, named, more, seconds)

    async def _left_out(self, max_file_bytes: int) -> list[Skipped]:
        """Changed or new files too large to keep, and nested repositories (listed by git as
        `dir/`), found before `git add` would read them."""
        listed = await self.git("ls-files", "-z", "--others", "--modified", "--exclude-standard")
        paths = sorted({p for p in listed.decode("utf-8", "surrogateescape").split("\0") if p})
        skipped: list[Skipped] = []
        for path in paths:
            if path.endswith("/"):
                skipped.append(Skipped(path, "nested-repository"))
                continue
            try:
                info = os.lstat(os.path.join(self.workspace, path))
            except OSError:
                continue
            if stat.S_ISREG(info.st_mode) and info.st_size > max_file_bytes:
                skipped.append(Skipped(path, "large", info.st_size))
        return skipped

    async def _add(self, pathspec: bytes) -> list[str]:
        """`git add -A` into alp's index; the files git could not read."""
        with anyio.fail_after(GIT_TIMEOUT):
            done = await anyio.run_process(
                [
                    "git",
                    "add",
                    "-A",
                    "--ignore-errors",
                    "--pathspec-from-file=-",
                    "--pathspec-file-nul",
                ],
                input=pathspec,
                env=self.env(),
                cwd=self.workspace,
                check=False,
            )
        stderr = done.stderr.decode(errors="replace")
        unreadable = _UNREADABLE.findall(stderr)
        if done.returncode != 0 and not unreadable:
            raise GitFailed(f"git add exited {done.returncode}: {stderr.strip()[-2000:]}")
        return unreadable

    async def resolve(self, ref: str) -> str | None:
        out = await self.git("rev-parse", "--verify", "--quiet", ref + "^{commit}", ok=(0, 1))
        return out.decode().strip() or None

    async def tree_of(self, commit: str) -> str:
        return (await self.git("rev-parse", commit + "^{tree}")).decode().strip()

    async def message_of(self, commit: str) -> str:
        raw = await self.git("cat-file", "commit", commit)
        _, _, message = raw.decode("utf-8", "replace").partition("\n\n")
        return message

    async def raw_diff(self, before: str, after: str) -> bytes:
        return await self.git("diff-tree", "-r", "-z", "--no-renames", "--raw", before, after)

    async def numstat(self, before: str, after: str) -> bytes:
        return await self.git("diff-tree", "-r", "-z", "--no-renames", "--numstat", before, after)

    async def patch(self, before: str, after: str, limit: int) -> tuple[bytes, bool]:
        return await self.git_capped(
            ["diff-tree", "-r", "-p", "--no-renames", "--no-color", "--no-ext-diff", before, after],
            limit,
        )

    async def write_files(self, commit: str, paths: Sequence[str]) -> None:
        """The bytes and modes `commit` has for `paths`, written into the workspace (through
        a throwaway index: alp's own stays as it was)."""
        if not paths:
            return
        index = self.path / f"alp-restore-index-{os.getpid()}"
        try:
            await self.git("read-tree", commit, index=index)
            await self.git(
                "checkout-index",
                "-f",
                "-z",
                "--stdin",
                index=index,
                stdin=b"".join(p.encode("utf-8", "surrogateescape") + b"\0" for p in paths),
            )
        finally:
            index.unlink(missing_ok=True)

    async def entries(self, thread_id: str | None = None) -> list[Entry]:
        """The steps whose checkpoints this repository holds (of one thread, or all)."""
        prefix = REF_ROOT + (f"{thread_id}/" if thread_id else "")
        out = await self.git(
            "for-each-ref",
            "--format=%(refname)%00%(committerdate:unix)%00%(contents:body)",
            prefix,
        )
        found: dict[tuple[str, str], Entry] = {}
        for line in out.decode("utf-8", "replace").splitlines():
            ref, _, rest = line.partition("\0")
            when, _, body = rest.partition("\0")
            parsed = parse_ref(ref)
            if parsed is None:
                continue
            note = decode_note("\n\n" + body)
            at = note.at if note is not None else ""
            key = (parsed[0], parsed[1])
            old = found.get(key)
            refs = (*old.refs, ref) if old else (ref,)
            newest = max(old.time if old else 0, int(when or 0))
            found[key] = Entry(key[0], key[1], newest, refs, max(at, old.at if old else ""))
        return list(found.values())

    async def delete_refs(self, refs: Sequence[str]) -> None:
        if refs:
            commands = "".join(f"delete {ref}\n" for ref in refs)
            await self.git("update-ref", "--stdin", stdin=commands.encode())

    async def gc(self) -> None:
        await self.git("gc", "--prune=now", "--quiet")


def repo_bytes(path: Path) -> int:
    """Bytes on disk under a repository (blocking: call in a worker thread)."""
    total = 0
    for folder, _, files in os.walk(path):
        for name in files:
            try:
                total += os.lstat(os.path.join(folder, name)).st_blocks * 512
            except OSError:
                continue
    return total


__all__ = [
    "DEFAULT_IGNORE",
    "GitFailed",
    "ShadowRepo",
    "Snapshot",
    "repo_bytes",
    "repo_name",
]
