"""The meaning index's embedders: a static model in model2vec's format read from a local
directory, or any OpenAI-compatible `/embeddings` endpoint. Blocking; the caller runs them
in a worker thread.

Nothing is downloaded here: a model2vec directory must exist with its three files
(`model.safetensors`, `tokenizer.json`, `config.json`) before model2vec is asked to load it
(given a path that does not exist, model2vec would try the Hugging Face hub). Nothing is
sent anywhere but the endpoint the person configured.

This module imports numpy and model2vec (the optional extra `alp[semantic]`): it is
imported only once the meaning index is wanted, so alpd starts and keyword search works
without them. A missing extra, model or key is `EmbedderUnavailable` with what to do.

A generation of the index is fingerprinted by what decides its vectors: the embedder, and
the bytes of the model's three files (model2vec) or the endpoint, model name and dimensions
(openai). A model changed in place is a new fingerprint, so a new generation.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import sys
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Protocol

import msgspec

from alpd.domain.history.search_settings import DEFAULT_MODEL_NAME, SearchSettings

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = [
    "MODEL_FILES",
    "Embedder",
    "EmbedderFailed",
    "EmbedderSource",
    "EmbedderUnavailable",
    "default_model_dir",
    "load_embedder",
    "source_of",
]

MODEL_FILES: Final = ("model.safetensors", "tokenizer.json", "config.json")
#: an endpoint's answer is read up to this (a batch of 64 vectors of 4096 floats as JSON is
#: ~5 MB)
MAX_RESPONSE_BYTES: Final = 64 * 1024 * 1024
REQUEST_TIMEOUT: Final = 60.0


class EmbedderUnavailable(Exception):
    """The configured embedder cannot be used; `reason` says why, `hint` what to do."""

    def __init__(self, reason: str, hint: str) -> None:
        super().__init__(f"{reason}; {hint}")
        self.reason = reason
        self.hint = hint


class EmbedderFailed(Exception):
    """One embedding request failed (endpoint down, bad answer): the batch is retried."""


class EmbedderSource(msgspec.Struct, frozen=True, kw_only=True):
    """What a generation was embedded with, enough to load it again (stored as JSON)."""

    embedder: str
    #: model2vec: the model's directory; openai: the model name
    model: str
    endpoint: str | None = None


class Embedder(Protocol):
    source: EmbedderSource
    fingerprint: str
    dims: int
    #: embeds in this process in microseconds (a search's hop may embed its query), not
    #: over the network
    local: bool

    def embed(self, texts: list[str]) -> npt.NDArray[np.float32]:
        """One row per text, L2-normalised (a row of zeros for a text with no known token)."""
        ...


def default_model_dir(environ: dict[str, str] | os._Environ[str]) -> Path:
    """Where alpd looks for a model when `[search] model` is not set:
    $XDG_CACHE_HOME/alp/models/potion-base-8M."""
    cache = environ.get("XDG_CACHE_HOME") or str(Path(environ.get("HOME", "~")) / ".cache")
    return Path(cache).expanduser() / "alp" / "models" / DEFAULT_MODEL_NAME


def source_of(
    settings: SearchSettings, environ: dict[str, str] | os._Environ[str]
) -> EmbedderSource:
    if settings.embedder == "openai":
        return EmbedderSource(
            embedder="openai", model=settings.model or "", endpoint=settings.endpoint
        )
    model = Path(settings.model).expanduser() if settings.model else default_model_dir(environ)
    return EmbedderSource(embedder="model2vec", model=str(model))


def _normalised(vectors: Any) -> npt.NDArray[np.float32]:
    import numpy as np

    array = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(array, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    result: npt.NDArray[np.float32] = array / norms
    return result


#: BLAS's thread pools, each asked for one thread when numpy is first imported
BLAS_THREADS: Final = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def _import_numpy() -> None:
    """Import numpy with its BLAS on one thread (unless the person set these variables):
    a query's matrix-vector product is memory-bound, and on a busy 2-core machine
    OpenBLAS's own threads made its p50 ten times worse (13.7 ms against 1.2 ms for 35,000
    chunks, bench_meaning); one thread is also what "building takes one core" means.
    OpenBLAS reads the variables once, when it loads, so they are set for the import only
    and the runs alpd starts never inherit them."""
    if "numpy" in sys.modules:
        return
    unset = [name for name in BLAS_THREADS if name not in os.environ]
    for name in unset:
        os.environ[name] = "1"
    try:
        import numpy  # noqa: F401
    except ImportError:
        raise EmbedderUnavailable(
            "numpy is not installed", "install the extra: pip install 'alp[semantic]'"
        ) from None
    finally:
        for name in unset:
            os.environ.pop(name, None)


@dataclass
class StaticModelEmbedder:
    source: EmbedderSource
    fingerprint: str
    dims: int
    model: Any
    local: bool = True

    def embed(self, texts: list[str]) -> npt.NDArray[np.float32]:
        return _normalised(
            self.model.encode(texts, show_progress_bar=False, use_multiprocessing=False)
        )


def _load_static(source: EmbedderSource) -> StaticModelEmbedder:
    _import_numpy()
    try:
        from model2vec import StaticModel
    except ImportError:
        raise EmbedderUnavailable(
            "model2vec is not installed", "install the extra: pip install 'alp[semantic]'"
        ) from None
    directory = Path(source.model)
    missing = [name for name in MODEL_FILES if not (directory / name).is_file()]
    if missing:
        raise EmbedderUnavailable(
            f"no model2vec model at {directory} (missing {', '.join(missing)})",
            "put a model2vec model there (potion-base-8M: docs/search.md says how), or set "
            "[search] model to a model's directory",
        )
    digest = hashlib.sha256(b"model2vec\0")
    for name in MODEL_FILES:
        with (directory / name).open("rb") as f:
            digest.update(hashlib.file_digest(f, "sha256").digest())
    try:
        model = StaticModel.from_pretrained(directory)
    except Exception as exc:
        raise EmbedderUnavailable(
            f"the model at {directory} cannot be loaded ({type(exc).__name__}: {exc})"[:300],
            "fetch it again or point [search] model elsewhere",
        ) from exc
    return StaticModelEmbedder(
        source, f"model2vec:{digest.hexdigest()[:32]}", int(model.dim), model
    )


@dataclass
class EndpointEmbedder:
    source: EmbedderSource
    key: str | None
    fingerprint: str = ""
    dims: int = 0
    local: bool = False

    def embed(self, texts: list[str]) -> npt.NDArray[np.float32]:
        body = {"model": self.source.model, "input": texts}
        headers = {"content-type": "application/json"}
        if self.key:
            headers["authorization"] = f"Bearer {self.key}"
        request = urllib.request.Request(
            f"{self.source.endpoint}/embeddings",
            data=json.dumps(body).encode(),
            headers=headers,
            method="POST",
        )
        try:
            with urllib.request.urlopen(request, timeout=REQUEST_TIMEOUT) as response:
                answer = json.loads(response.read(MAX_RESPONSE_BYTES))
            rows = sorted(answer["data"], key=lambda item: item["index"])
            vectors = [row["embedding"] for row in rows]
        except urllib.error.HTTPError as exc:
            raise EmbedderFailed(f"{self.source.endpoint} answered HTTP {exc.code}") from exc
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise EmbedderFailed(f"{self.source.endpoint}: {exc}"[:300]) from exc
        if len(vectors) != len(texts):
            raise EmbedderFailed(f"{self.source.endpoint} answered {len(vectors)} of {len(texts)}")
        return _normalised(vectors)


def _read_key(settings: SearchSettings, environ: dict[str, str] | os._Environ[str]) -> str | None:
    if settings.api_key_file:
        path = Path(settings.api_key_file).expanduser()
        try:
            mode = path.stat().st_mode
            if mode & (stat.S_IRWXG | stat.S_IRWXO):
                raise EmbedderUnavailable(
                    f"{path} can be read by others (mode {stat.S_IMODE(mode):o})",
                    f"chmod 600 {path}",
                )
            return path.read_text().strip() or None
        except OSError as exc:
            raise EmbedderUnavailable(
                f"the key file {path} cannot be read ({exc.strerror})", "check [search] apiKeyFile"
            ) from None
    return environ.get(settings.api_key_env) or None


def _load_endpoint(
    source: EmbedderSource, settings: SearchSettings, environ: dict[str, str] | os._Environ[str]
) -> EndpointEmbedder:
    _import_numpy()
    embedder = EndpointEmbedder(source, _read_key(settings, environ))
    try:
        probe = embedder.embed(["alp"])
    except EmbedderFailed as exc:
        raise EmbedderUnavailable(
            f"the embeddings endpoint cannot be reached ({exc})",
            "start it, or check [search] endpoint and model",
        ) from None
    embedder.dims = int(probe.shape[1])
    identity = f"openai\0{source.endpoint}\0{source.model}\0{embedder.dims}".encode()
    embedder.fingerprint = f"openai:{hashlib.sha256(identity).hexdigest()[:32]}"
    return embedder


def load_embedder(
    source: EmbedderSource, settings: SearchSettings, environ: dict[str, str] | os._Environ[str]
) -> Embedder:
    """The embedder `source` names, ready to embed (blocking: reads and hashes the model, or
    asks the endpoint once for its dimensions); EmbedderUnavailable says why not."""
    if source.embedder == "openai":
        return _load_endpoint(source, settings, environ)
    return _load_static(source)
