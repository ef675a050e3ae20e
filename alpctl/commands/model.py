"""`alp model fetch [NAME]`: download a model2vec model for search by meaning into alp's
cache, on your say-so (docs/search.md). alpd itself never downloads anything.

NAME is a Hugging Face repository (`minishlab/potion-base-8M`) or a model of MinishLab's
(`potion-base-8M`, the default). The source's file list (`/api/models/REPO/tree/main`) gives
each file's size and digest (a large file's sha256, a small one's git blob id); the three
files model2vec needs are downloaded into a temporary directory beside the target, each
checked against its size and digest, and the directory is renamed into place only when all
three match: an interrupted or corrupted fetch installs nothing. The base URL is
https://huggingface.co, or `--from URL` / ALP_MODELS_URL (a mirror; the tests' local fake).
Then a running alpd is asked to reload, so it loads the model now.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
import tempfile
import urllib.error
import urllib.request
from pathlib import Path

from alpctl.client import DaemonUnreachable, RpcError
from alpctl.invocation import EXIT_OK, Invocation, UsageError
from protocol.errors import DOMAIN_ERRORS

# Annotations only: importing `typing` would cost every CLI call ~1.5 ms.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from typing import Any

    from alpctl.command_line import Arguments

DEFAULT_MODEL = "potion-base-8M"
DEFAULT_OWNER = "minishlab"
DEFAULT_BASE_URL = "https://huggingface.co"
#: what model2vec loads (alpd's embedders check the same three)
FILES = ("model.safetensors", "tokenizer.json", "config.json")
#: a file larger than this is refused (a static model is tens to hundreds of MB)
MAX_FILE_BYTES = 4 * 1024**3
BLOCK = 1024 * 1024
TIMEOUT = 60.0

_EPILOG = """\
The model goes to $XDG_CACHE_HOME/alp/models/NAME (~/.cache/alp/models/NAME), where alpd
looks for potion-base-8M when [search] model is not set; --dir puts it elsewhere (then set
[search] model to that directory). Only the three files model2vec needs are fetched, each
checked against the size and digest its source lists; nothing is installed unless all
match. Nothing is sent but the requests for the files."""


def configure(parser: argparse.ArgumentParser) -> None:
    parser.usage = "alp model fetch [NAME] [--from URL] [--dir DIR] [--force]"
    parser.epilog = _EPILOG
    parser.add_argument("action", choices=("fetch",), help="fetch: download a model")
    parser.add_argument(
        "name", nargs="?", default=DEFAULT_MODEL,
        help=f"a model2vec model: OWNER/NAME or a {DEFAULT_OWNER} one ({DEFAULT_MODEL})",
    )  # fmt: skip
    parser.add_argument("--from", dest="base_url", help="base URL (ALP_MODELS_URL; Hugging Face)")
    parser.add_argument("--dir", help="install here instead of alp's model cache")
    parser.add_argument("--force", action="store_true", help="fetch again over a model there")


def _failed(message: str, **data: Any) -> RpcError:
    code = DOMAIN_ERRORS["MODEL_FETCH_FAILED"][0]
    return RpcError(code, message, {"name": "MODEL_FETCH_FAILED", **data})


def model_cache(environ: Any = os.environ) -> Path:
    """$XDG_CACHE_HOME/alp/models (alpd's `default_model_dir` is a model in it)."""
    cache = environ.get("XDG_CACHE_HOME") or str(Path(environ.get("HOME", "~")) / ".cache")
    return Path(cache).expanduser() / "alp" / "models"


def _get(url: str) -> Any:
    request = urllib.request.Request(url, headers={"user-agent": "alp-model-fetch"})
    try:
        return urllib.request.urlopen(request, timeout=TIMEOUT)
    except urllib.error.HTTPError as exc:
        raise _failed(f"{url} answered HTTP {exc.code}", url=url) from None
    except (OSError, ValueError) as exc:
        raise _failed(f"{url} cannot be reached ({exc}); check the address", url=url) from None


def listing(base: str, repo: str) -> dict[str, tuple[int, str, str]]:
    """file → (size, algorithm, digest) of the files model2vec needs, from the source's list."""
    url = f"{base}/api/models/{repo}/tree/main"
    with _get(url) as response:
        try:
            entries = json.loads(response.read(16 * 1024 * 1024))
            by_path = {entry["path"]: entry for entry in entries if entry.get("type") == "file"}
        except (ValueError, TypeError, KeyError, AttributeError):
            raise _failed(f"{url} did not answer a file list", url=url) from None
    missing = [name for name in FILES if name not in by_path]
    if missing:
        raise _failed(
            f"{repo} has no {', '.join(missing)}: not a model2vec model (potion-base-8M is one)",
            repo=repo,
        )
    found = {}
    for name in FILES:
        entry = by_path[name]
        lfs = entry.get("lfs")
        if lfs:
            found[name] = (int(lfs["size"]), "sha256", str(lfs["oid"]))
        else:
            found[name] = (int(entry["size"]), "git-blob", str(entry["oid"]))
        if found[name][0] > MAX_FILE_BYTES:
            raise _failed(f"{repo}'s {name} is larger than {MAX_FILE_BYTES} bytes", repo=repo)
    return found


class Progress:
    """One line on stderr, redrawn, when stderr is a terminal; a line per file otherwise."""

    def __init__(self, total: int) -> None:
        self.total = max(total, 1)
        self.done = 0
        self.tty = sys.stderr.isatty()

    def add(self, name: str, count: int) -> None:
        self.done += count
        if self.tty:
            width = 30
            filled = width * self.done // self.total
            bar = "#" * filled + "-" * (width - filled)
            sys.stderr.write(
                f"\r  {name:<18} [{bar}] {self.done / 1e6:6.1f} of {self.total / 1e6:.1f} MB"
            )
            sys.stderr.flush()

    def file_done(self, name: str, size: int) -> None:
        if self.tty:
            sys.stderr.write("\n" if self.done >= self.total else "")
        else:
            sys.stderr.write(f"  {name}: {size} bytes, digest checked\n")


def download(url: str, path: Path, size: int, algorithm: str, digest: str, bar: Progress) -> None:
    """`url` into `path`, checked against `size` and `digest` (sha256, or git's blob id)."""
    h = hashlib.sha256() if algorithm == "sha256" else hashlib.sha1(f"blob {size}\0".encode())
    got = 0
    with _get(url) as response, path.open("wb") as out:
        while block := response.read(BLOCK):
            got += len(block)
            if got > size:
                raise _failed(f"{url} sent more than the {size} bytes its source lists", url=url)
            h.update(block)
            out.write(block)
            bar.add(path.name, len(block))
    if got != size:
        raise _failed(f"{url} sent {got} of {size} bytes; fetch again", url=url)
    if h.hexdigest() != digest:
        raise _failed(
            f"{path.name} does not match the {algorithm} digest its source lists "
            f"({h.hexdigest()[:16]}… against {digest[:16]}…): not installed",
            file=path.name,
        )
    bar.file_done(path.name, size)


def fetch(name: str, base: str, target: Path, force: bool) -> dict[str, Any]:
    repo = name if "/" in name else f"{DEFAULT_OWNER}/{name}"
    if not force and all((target / file).is_file() for file in FILES):
        return {"model": str(target), "repo": repo, "fetched": False, "bytes": 0}
    files = listing(base, repo)
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.fetch-", dir=target.parent))
    try:
        bar = Progress(sum(size for size, _, _ in files.values()))
        for file, (size, algorithm, digest) in files.items():
            url = f"{base}/{repo}/resolve/main/{file}"
            download(url, staging / file, size, algorithm, digest, bar)
        staging.chmod(0o755)
        if target.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{target.name}.old-", dir=target.parent))
            target.rename(old / target.name)
            staging.rename(target)
            shutil.rmtree(old, ignore_errors=True)
        else:
            staging.rename(target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    total = sum(size for size, _, _ in files.values())
    return {"model": str(target), "repo": repo, "fetched": True, "bytes": total}


def _reload(inv: Invocation) -> bool:
    """Ask a running alpd (never one started for this) to load the model now."""
    try:
        inv.running_daemon().call("daemon/reload", {})
    except (DaemonUnreachable, RpcError, OSError):
        return False
    return True


def _text(result: dict[str, Any]) -> str:
    done = "fetched" if result["fetched"] else "already there (--force fetches it again)"
    lines = [f"{result['repo']}: {done}: {result['model']}"]
    if result["reloaded"]:
        lines.append("alpd reloaded: `alp status` shows the meaning index building")
    else:
        lines.append("no alpd answered; it loads the model when it starts")
    return "\n".join(lines)


def run(args: Arguments, inv: Invocation) -> int:
    if args.action != "fetch":
        raise UsageError("alp model fetch [NAME]")
    base = (args.base_url or os.environ.get("ALP_MODELS_URL") or DEFAULT_BASE_URL).rstrip("/")
    name = args.name.strip("/")
    target = Path(args.dir).expanduser() if args.dir else model_cache() / name.rsplit("/", 1)[-1]
    result = fetch(name, base, target, args.force)
    result["reloaded"] = _reload(inv)
    inv.out.emit(result, _text)
    return EXIT_OK
