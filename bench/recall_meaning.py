"""Recall of search on your own history: `python bench/recall_meaning.py QUERIES.json [--k 5]
[--socket PATH] [--json]`.

QUERIES.json is a list of `{"query": "…", "expect": "…"}`: a question in your own words and a
piece of the text that answers it. Each query runs in the three modes (`hybrid`, `keyword`,
`meaning`) against the running alpd (`alp` must reach it), and a hit counts when its snippet
contains `expect` (case-insensitive). Prints recall@k per mode and, per query, the rank where
each mode found it (docs/search.md); `--json` prints `{"k", "recall": {mode: found}, "queries",
"ranks"}` instead. tests/integration/history/test_recall_meaning.py runs it on a generated
history so it cannot rot.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from alpctl.client import Client, RpcError
from protocol.paths import default_socket_path

MODES = ("keyword", "meaning", "hybrid")


def rank_of(client: Client, query: str, expect: str, mode: str, k: int) -> int | str | None:
    try:
        result = client.call(
            "history/search",
            {"query": query, "mode": mode, "limit": k, "highlightStart": "", "highlightEnd": ""},
        )
    except RpcError as exc:
        return f"error: {exc}"
    if result.get("mode", "keyword") != mode:
        return f"answered by {result.get('mode', 'keyword')}: {result.get('notice')}"
    for rank, hit in enumerate(result["hits"], start=1):
        if expect.lower() in " ".join(hit["snippet"].split()).lower():
            return rank
    return None


def recall(client: Client, queries: list[dict[str, str]], k: int) -> dict[str, Any]:
    """Per mode, how many queries found their text in the first `k` hits, and each rank."""
    found = dict.fromkeys(MODES, 0)
    ranks = []
    for item in queries:
        rank = {mode: rank_of(client, item["query"], item["expect"], mode, k) for mode in MODES}
        for mode, value in rank.items():
            found[mode] += isinstance(value, int)
        ranks.append({"query": item["query"], **rank})
    return {"k": k, "queries": len(queries), "recall": found, "ranks": ranks}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("queries")
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--socket", default=None, help="alpd's socket (default: alp's)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with open(args.queries) as f:
        queries = json.load(f)
    client = Client.connect(args.socket or default_socket_path())
    result = recall(client, queries, args.k)
    if args.json:
        print(json.dumps(result))
        return 0
    for row in result["ranks"]:
        print(f"{row['query']!r}: " + ", ".join(f"{m} {row[m]}" for m in MODES))
    for mode in MODES:
        print(f"recall@{args.k} {mode}: {result['recall'][mode]}/{len(queries)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
