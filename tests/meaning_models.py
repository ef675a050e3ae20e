"""Embedders for the meaning index's tests and bench, with nothing downloaded.

* `write_static_model`: a model in model2vec's own format (model.safetensors, tokenizer.json,
  config.json), made with model2vec's own `StaticModel(...).save_pretrained` from vectors
  generated here, so alpd loads it with the real loading code. The tokenizer is a word-level
  one (lowercase, split on whitespace and punctuation) over the given vocabulary.
* `concept_vectors`: word vectors where the words of one concept share a direction (plus a
  little noise) and every other word points its own random way, so a test can build a model
  under which a paraphrase must be found by meaning and cannot be found by keyword.
* `FakeEmbeddings`: an OpenAI-compatible `/v1/embeddings` on 127.0.0.1 embedding with such
  word vectors, recording every text it was asked to embed.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import numpy as np

WORD = re.compile(r"\w+")


def concept_vectors(
    concepts: Mapping[str, Sequence[str]],
    other_words: Iterable[str] = (),
    dims: int = 32,
    seed: int = 7,
) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    vectors: dict[str, np.ndarray] = {}
    for words in concepts.values():
        direction = rng.standard_normal(dims)
        for word in words:
            vectors[word] = direction + 0.1 * rng.standard_normal(dims)
    for word in other_words:
        vectors.setdefault(word, rng.standard_normal(dims))
    return {word: vector.astype(np.float32) for word, vector in vectors.items()}


def write_static_model(path: Path, vectors: Mapping[str, np.ndarray]) -> Path:
    """A model2vec model of `vectors` (word → vector) saved in `path`; returns `path`."""
    from model2vec import StaticModel
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers

    dims = len(next(iter(vectors.values())))
    vocab = {"[UNK]": 0, "[PAD]": 1}
    rows = [np.zeros(dims, dtype=np.float32), np.zeros(dims, dtype=np.float32)]
    for word, vector in vectors.items():
        vocab[word] = len(vocab)
        rows.append(np.asarray(vector, dtype=np.float32))
    tokenizer = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.Lowercase()
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    StaticModel(np.stack(rows), tokenizer, normalize=True).save_pretrained(path)
    return path


def random_vocabulary_model(path: Path, words: Sequence[str], dims: int, seed: int = 3) -> Path:
    """A model of realistic size: `words` with random vectors of `dims`."""
    rng = np.random.default_rng(seed)
    matrix = rng.standard_normal((len(words), dims)).astype(np.float32)
    return write_static_model(path, dict(zip(words, matrix, strict=True)))


class FakeEmbeddings:
    """`POST /v1/embeddings` on 127.0.0.1 (the mean of the known words' vectors of each
    input); `texts` holds every input it was asked to embed, in order. `fail` makes it answer
    HTTP 503."""

    def __init__(self, vectors: Mapping[str, np.ndarray]) -> None:
        self.vectors = dict(vectors)
        self.dims = len(next(iter(self.vectors.values())))
        self.texts: list[str] = []
        self.requests = 0
        self.fail = False
        #: seconds each request takes (to kill a build midway)
        self.delay = 0.0
        #: while cleared, every request but the load's probe (["alp"]) waits for it: a build
        #: held midway for as long as a test needs
        self.gate = threading.Event()
        self.gate.set()
        self.lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                return None

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["content-length"])))
                if fake.fail or self.path != "/v1/embeddings":
                    self.send_response(503 if fake.fail else 404)
                    self.end_headers()
                    return
                texts = body["input"]
                if texts != ["alp"]:
                    fake.gate.wait(timeout=50)
                if fake.delay:
                    time.sleep(fake.delay)
                with fake.lock:
                    fake.requests += 1
                    fake.texts.extend(texts)
                data = [
                    {"object": "embedding", "index": i, "embedding": fake.embed(text)}
                    for i, text in enumerate(texts)
                ]
                payload = json.dumps({"object": "list", "data": data, "model": body["model"]})
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload.encode())

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def embed(self, text: str) -> list[float]:
        known = [self.vectors[w] for w in WORD.findall(text.lower()) if w in self.vectors]
        if not known:
            return [0.0] * self.dims
        return [float(x) for x in np.mean(known, axis=0)]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __enter__(self) -> FakeEmbeddings:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


class FakeModelHub:
    """The two routes of a model hub `alp model fetch` reads, on 127.0.0.1, serving the files
    of a model directory the test built: `/api/models/REPO/tree/main` (each file's size, the
    git blob id of a small file, the sha256 of `model.safetensors` as a large-file pointer's
    `lfs.oid`) and `/REPO/resolve/main/FILE`. `corrupt` names a file served with one byte
    changed (its listed digest unchanged); `requests` holds every path asked for."""

    def __init__(self, repo: str, model: Path) -> None:
        self.repo = repo
        self.files = {path.name: path.read_bytes() for path in sorted(model.iterdir())}
        self.corrupt: str | None = None
        self.requests: list[str] = []
        hub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                return None

            def do_GET(self) -> None:
                hub.requests.append(self.path)
                body = hub.answer(self.path)
                if body is None:
                    self.send_response(404)
                    self.end_headers()
                    return
                self.send_response(200)
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def listing(self) -> list[dict[str, Any]]:
        entries: list[dict[str, Any]] = []
        for name, data in self.files.items():
            blob = hashlib.sha1(f"blob {len(data)}\0".encode() + data).hexdigest()
            entry: dict[str, Any] = {"type": "file", "path": name, "size": len(data), "oid": blob}
            if name.endswith(".safetensors"):
                sha = hashlib.sha256(data).hexdigest()
                entry["lfs"] = {"oid": sha, "size": len(data), "pointerSize": 134}
                entry["size"] = len(data)
            entries.append(entry)
        return entries

    def answer(self, path: str) -> bytes | None:
        if path == f"/api/models/{self.repo}/tree/main":
            return json.dumps(self.listing()).encode()
        prefix = f"/{self.repo}/resolve/main/"
        if path.startswith(prefix) and path[len(prefix) :] in self.files:
            name = path[len(prefix) :]
            data = self.files[name]
            if name == self.corrupt:
                data = bytes([data[0] ^ 1]) + data[1:]
            return data
        return None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> FakeModelHub:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
