"""Secret filter report: recall per kind, false positives on real transcripts, throughput.

Run: ``.venv/bin/python bench/secrets_corpus_report.py [--detect-secrets] [--baseline FILE]``

* recall: share of the corpus samples (``tests/unit/secrets/secrets_corpus.py``) of each kind whose
  every secret is gone from ``redact(text).text``;
* false positives: findings per group of the negative corpus
(``tests/unit/secrets/secrets_negatives.py``:
  code that names secrets, look-alike command lines, URLs, ids and base64, prose), on the text
  the history would store from every fixture transcript (entries' text, tool input, output
  tail), and on the raw fixture files (system prompts, tool schemas: 1.5 MB of prose and JSON
  that hold no secret);
* throughput in MB/s of text (median of ``--runs`` timings: the machine is shared), beside
  two floors measured in the same run on the same text, interleaved with it: one
  ``str.count`` pass and one ``re.search`` of a trivial pattern; the ratio is redact time /
  floor time (lower is better).

``--detect-secrets`` adds the same figures for Yelp detect-secrets (if installed), run
in-process over every line with all its plugins, redacting each string it reports.
``--baseline FILE`` adds them for another version of ``alpd/domain/secrets/filter.py`` (for example
``git show REV:alpd/domain/secrets/filter.py > /tmp/before.py``; it must import from the current
tree), timed interleaved with this one.
"""

from __future__ import annotations

import argparse
import importlib.util
import re
import statistics
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "unit" / "secrets")]

from secrets_corpus import KINDS, corpus  # noqa: E402
from secrets_negatives import NEGATIVES  # noqa: E402

from alpd.domain.history.transcripts import read_claude, read_codex  # noqa: E402
from alpd.domain.secrets.context_rules import CONTEXT_RULES  # noqa: E402
from alpd.domain.secrets.filter import redact  # noqa: E402
from alpd.domain.secrets.rules import VENDOR_RULES  # noqa: E402

FIXTURES = ROOT / "tests" / "fixtures" / "runtimes"
RULES = (*CONTEXT_RULES, *VENDOR_RULES)

Redactor = Callable[[str], tuple[str, int]]


def ours(text: str) -> tuple[str, int]:
    result = redact(text)
    return result.text, len(result.findings)


def baseline_redactor(path: str) -> Redactor:
    spec = importlib.util.spec_from_file_location("secrets_baseline", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["secrets_baseline"] = module
    spec.loader.exec_module(module)

    def run(text: str) -> tuple[str, int]:
        result = module.redact(text)
        return result.text, len(result.findings)

    return run


def detect_secrets_redactor() -> Redactor:
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
    from detect_secrets.settings import default_settings

    with default_settings():
        classes: list[Any] = list(get_mapping_from_secret_type_to_class().values())
        plugins = [cls() for cls in classes]

    def run(text: str) -> tuple[str, int]:
        found: set[str] = set()
        with default_settings():
            for line in text.splitlines():
                for plugin in plugins:
                    for secret in plugin.analyze_line(filename="transcript.txt", line=line):
                        if secret.secret_value:
                            found.add(secret.secret_value)
        for value in sorted(found, key=len, reverse=True):
            text = text.replace(value, "[REDACTED]")
        return text, len(found)

    return run


def stored_texts() -> list[str]:
    texts: list[str] = []
    for path in sorted(FIXTURES.glob("*/*.jsonl")):
        reader = read_claude if path.parent.name == "claude" else read_codex
        for entry in reader(path.read_bytes()).entries:
            texts += [t for t in (entry.text, entry.tool_input, entry.output_tail) if t]
    return texts


def raw_files() -> list[str]:
    return [path.read_text() for path in sorted(FIXTURES.glob("*/*.jsonl"))]


def recall(redactor: Redactor) -> dict[str, tuple[int, int]]:
    per_kind: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for sample in corpus(samples_per_kind=3):
        out, _ = redactor(sample.text)
        counts = per_kind[sample.kind]
        counts[1] += 1
        counts[0] += all(secret not in out for secret in sample.secrets)
    return {kind: (hit, total) for kind, (hit, total) in per_kind.items()}


def timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def throughput(
    redactor: Redactor, texts: list[str], runs: int
) -> tuple[float, float, float, float]:
    """(MB/s, µs per text, ratio to a str.count pass, ratio to a trivial re.search)."""
    size = sum(len(t.encode()) for t in texts) / 1e6
    trivial = re.compile("\x00")
    took, count_floor, re_floor = [], [], []
    for _ in range(runs):
        took.append(timed(lambda: [redactor(t) for t in texts]))
        count_floor.append(timed(lambda: [t.count("\x00") for t in texts]))
        re_floor.append(timed(lambda: [trivial.search(t) for t in texts]))
    ours = statistics.median(took)
    return (
        size / ours,
        ours / len(texts) * 1e6,
        ours / statistics.median(count_floor),
        ours / statistics.median(re_floor),
    )


def report(name: str, redactor: Redactor, runs: int) -> None:
    print(f"== {name}")
    kinds = recall(redactor)
    missed = {kind: counts for kind, counts in kinds.items() if counts[0] < counts[1]}
    full = len(kinds) - len(missed)
    print(f"recall: {full}/{len(KINDS)} kinds fully redacted")
    for kind, (hit, total) in sorted(kinds.items()):
        print(f"  {kind:34} {hit}/{total}")
    texts, files = stored_texts(), raw_files()
    print("false positives, negative corpus (findings / texts per group):")
    for group, negatives in NEGATIVES.items():
        found = sum(redactor(t)[1] for t in negatives)
        print(f"  {group:34} {found}/{len(negatives)}")
    print(f"false positives: {sum(redactor(t)[1] for t in texts)} findings in {len(texts)} stored")
    print(f"  fixture texts; {sum(redactor(t)[1] for t in files)} in the {len(files)} raw files")
    for label, sample in (("stored entry texts", texts), ("raw fixture files", files)):
        mbps, per_text, vs_count, vs_re = throughput(redactor, sample, runs)
        print(
            f"throughput on {label}: {mbps:8.1f} MB/s, {per_text:9.1f} µs per text; "
            f"{vs_count:7.1f}x a str.count pass, {vs_re:7.1f}x a trivial re.search"
        )


def false_positives_per_rule() -> None:
    """Findings of each rule kind over every text that holds no secret: the negative corpus,
    the fixture texts and the raw fixture files."""
    negatives = [t for texts in NEGATIVES.values() for t in texts]
    found = Counter(
        kind
        for text in (*negatives, *stored_texts(), *raw_files())
        for kind in redact(text).findings
    )
    kinds = sorted({"secret_assignment", *(rule.kind for rule in RULES)})
    print(f"false positives per rule kind ({len(kinds)} kinds, every text without a secret):")
    print("  " + ", ".join(f"{kind} {found[kind]}" for kind in kinds))


# Texts built to make a rule work hard: one literal thousands of times in a run of the
# token's alphabet, key BEGIN lines without END, a line full of ``.pgpass`` literals.
ADVERSARIAL = {
    "'sk-' x 20k": "sk-" * 20_000,
    "'sk-ant-' x 10k": "sk-ant-" * 10_000,
    "200k 'A' (Twitter's run)": "A" * 200_000,
    "500 BEGIN lines, no END": ("-----BEGIN RSA PRIVATE KEY-----\n" + "x" * 100) * 500,
    "':5432:' x 50 per line": (":5432:" * 50 + "\n") * 500,
    "'://a:' then '@' + 250 chars": ("://a:" + "@" + "b" * 250) * 500,
    "secret-name stems only": "password token secret key auth " * 5_000,
    # A base64 prefix's literal in one run and in many short ones: decodes are capped.
    "'Z2hwX' x 20k (one base64 run)": "Z2hwX" * 20_000,
    "'Z2hwXaaa ' x 20k": "Z2hwXaaa " * 20_000,
    "64 KiB of base64 lines, 2k END lines": ("QUFB" * 16 + "\n") * 1_000
    + "-----END PRIVATE KEY-----\n" * 2_000,
    "'x=1 \\' line continuations x 20k": "TOKEN=abc \\\n" * 20_000,
    "'a\\' 'b' pairs x 20k": "a \\\nb\n" * 20_000,
}


def adversarial(redactor: Redactor) -> None:
    print("adversarial inputs (one run each; linear means MB/s of the same order as above):")
    for label, text in ADVERSARIAL.items():
        took = timed(partial(redactor, text))
        print(f"  {label:34} {len(text) / 1e6:5.2f} MB {len(text) / 1e6 / took:8.2f} MB/s")


def cpu_timed(fn: Callable[[], object]) -> float:
    start = time.process_time()
    fn()
    return time.process_time() - start


def compare(redactors: dict[str, Redactor], runs: int) -> None:
    """MB/s of each redactor in CPU time (what other processes on a shared machine disturb
    least), timed interleaved, and the ratio of the medians."""
    print("== interleaved comparison (CPU time, medians)")
    # Passes per timing: enough for each to take tens of milliseconds.
    sets = (("stored entry texts", stored_texts(), 100), ("raw fixture files", raw_files(), 2))
    for label, texts, passes in sets:
        size = sum(len(t.encode()) for t in texts) * passes / 1e6
        took: dict[str, list[float]] = {name: [] for name in redactors}
        for _ in range(runs):
            for name, redactor in redactors.items():
                took[name].append(cpu_timed(partial(_redact_all, redactor, texts * passes)))
        medians = {name: statistics.median(times) for name, times in took.items()}
        first = next(iter(medians.values()))
        figures = ", ".join(
            f"{name} {size / m:.1f} MB/s ({m / first:.2f}x)" for name, m in medians.items()
        )
        print(f"  {label}: {figures}")


def _redact_all(redactor: Redactor, texts: list[str]) -> None:
    for text in texts:
        redactor(text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--detect-secrets", action="store_true", help="compare with it")
    parser.add_argument("--baseline", metavar="FILE", help="another secrets.py to compare with")
    parser.add_argument("--runs", type=int, default=9, help="timing runs (median is kept)")
    args = parser.parse_args()
    report("alpd.domain.secrets.filter", ours, args.runs)
    false_positives_per_rule()
    adversarial(ours)
    if args.baseline:
        baseline = baseline_redactor(args.baseline)
        report(f"baseline {args.baseline}", baseline, 1)
        adversarial(baseline)
        compare({"this": ours, "baseline": baseline}, args.runs)
    if args.detect_secrets:
        report("detect-secrets (all plugins, in-process)", detect_secrets_redactor(), 1)


if __name__ == "__main__":
    main()
