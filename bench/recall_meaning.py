"""Recall of search on your own history: `python bench/recall_meaning.py QUERIES.json [--k 5]`.

QUERIES.json is a list of `{"query": "…", "expect": "…"}`: a question in your own words and a
piece of the text that answers it. Each query runs in the three modes (`hybrid`, `keyword`,
`meaning`) against the running alpd (`alp` must reach it), and a hit counts when its snippet
contains `expect` (case-insensitive). Prints recall@k per mode and, per query, the rank where
each mode found it (docs/search.md).
"""

from __future__ import annotations

import argparse
import json
import sys

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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("queries")
    parser.add_argument("--k", type=int, default=5)
    args = parser.parse_args()
    with open(args.queries) as f:
        queries = json.load(f)
    client = Client.connect(default_socket_path())
    found = dict.fromkeys(MODES, 0)
    for item in queries:
        ranks = {
            mode: rank_of(client, item["query"], item["expect"], mode, args.k) for mode in MODES
        }
        for mode, rank in ranks.items():
            found[mode] += isinstance(rank, int)
        print(f"{item['query']!r}: " + ", ".join(f"{m} {r}" for m, r in ranks.items()))
    for mode in MODES:
        print(f"recall@{args.k} {mode}: {found[mode]}/{len(queries)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
