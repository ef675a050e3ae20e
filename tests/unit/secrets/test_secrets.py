"""The secret filter: every fake credential in the corpus goes, real transcripts stay intact."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from secrets_corpus import KINDS, Sample, corpus
from secrets_negatives import NEGATIVES

from alpd.domain.history.transcripts import output_tail, read_claude, read_codex
from alpd.domain.secrets.filter import _RULES, REACH, _find, redact, redacted_tail
from alpd.domain.secrets.rules import VENDOR_RULES

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "runtimes"
SAMPLES = corpus(samples_per_kind=3)


def stored_texts() -> list[str]:
    texts: list[str] = []
    for path in sorted(FIXTURES.glob("*/*.jsonl")):
        reader = read_claude if path.parent.name == "claude" else read_codex
        for entry in reader(path.read_bytes()).entries:
            texts += [t for t in (entry.text, entry.tool_input, entry.output_tail) if t]
    return texts


def test_corpus_covers_at_least_a_hundred_kinds() -> None:
    assert len(KINDS) >= 100
    assert {sample.kind for sample in SAMPLES} == set(KINDS)


def test_every_rule_finds_a_secret_of_the_corpus() -> None:
    # Through its triggers, as redact runs it (spans before merging): no rule is dead.
    fired = {kind for sample in SAMPLES for *_, kind in _find(sample.text)}
    assert {"secret_assignment", *(rule.kind for rule in _RULES)} - fired == set()


def test_corpus_is_deterministic() -> None:
    assert corpus(samples_per_kind=3) == SAMPLES


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda sample: sample.kind)
def test_every_corpus_secret_is_redacted(sample: Sample) -> None:
    result = redact(sample.text)
    for secret in sample.secrets:
        assert secret not in result.text
    assert result.findings
    assert all(f"[REDACTED:{kind}]" in result.text for kind in result.findings)


@pytest.mark.parametrize("sample", SAMPLES[::7], ids=lambda sample: sample.kind)
def test_redacting_twice_finds_nothing_new(sample: Sample) -> None:
    once = redact(sample.text)
    assert redact(once.text) == type(once)(once.text, ())


@pytest.mark.parametrize(
    "text",
    [text for texts in NEGATIVES.values() for text in texts],
    ids=[f"{group}-{n}" for group, texts in NEGATIVES.items() for n in range(len(texts))],
)
def test_negative_corpus_produces_no_findings(text: str) -> None:
    # Code that names a secret (`getpass.getpass(...)`, `os.environ["OPENAI_API_KEY"]`),
    # commands whose options only look like password options, URLs with ports and e-mails.
    assert redact(text) == type(redact(text))(text, ())


def test_fixture_texts_produce_no_findings() -> None:
    texts = stored_texts()
    assert len(texts) > 50
    assert [redact(text).findings for text in texts if redact(text).findings] == []


def test_raw_fixture_files_produce_no_findings() -> None:
    # System prompts, tool schemas, ids and hashes: 1.4 MB of text that holds no secret.
    for path in sorted(FIXTURES.glob("*/*.jsonl")):
        assert redact(path.read_text()).findings == (), path.name


def test_password_in_url_keeps_the_rest_of_the_url() -> None:
    result = redact("git remote add origin https://deploy:s3cr3t-Pa55@git.example.com/x.git")
    assert result.text == (
        "git remote add origin https://deploy:[REDACTED:url_password]@git.example.com/x.git"
    )
    assert result.findings == ("url_password",)


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("API_KEY=abcdef123456", "API_KEY=[REDACTED:secret_assignment]"),
        ("export DB_PASSWORD='pa ss, word'", "export DB_PASSWORD='[REDACTED:secret_assignment]'"),
        ('{"password": "hunter2hunter2"}', '{"password": "[REDACTED:secret_assignment]"}'),
        ("dbPassword: correcthorse", "dbPassword: [REDACTED:secret_assignment]"),
        ("--token=0123abcd4567", "--token=[REDACTED:secret_assignment]"),
    ],
)
def test_secret_named_assignments_are_redacted(line: str, expected: str) -> None:
    assert redact(line).text == expected


@pytest.mark.parametrize(
    "text",
    [
        "API_KEY=$API_KEY",
        "API_KEY=${API_KEY}",
        "password: null",
        "max_tokens: 4096",
        '"fallback_token_limit_override":3000}}',
        "PASSWORD_FILE=/run/secrets/db",
        "PWD=/home/dev/project",
        "Original token count: 2",
        "tokenizer: cl100k_base",
        "compass: northwest",
        '{"key": "some-config-value"}',
        "see https://example.com:8443/path?q=1 and ssh://git@host:22/x",
        "author: Jane Developer",
    ],
)
def test_configuration_that_only_sounds_secret_is_kept(text: str) -> None:
    assert redact(text).findings == ()
    assert redact(text).text == text


def test_truncated_private_key_is_redacted_to_the_end() -> None:
    # An output tail can end inside a key block: everything after BEGIN goes.
    text = "key follows\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA"
    assert redact(text).text == "key follows\n[REDACTED:private_key]"


def test_private_key_without_end_line_is_redacted_in_a_long_text() -> None:
    body = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC" * 100
    text = f"-----BEGIN PRIVATE KEY-----\n{body}\n" + "log line\n" * 10_000
    assert body[:64] not in redact(text).text


def test_text_without_secrets_is_returned_as_is() -> None:
    text = "FAKE-CLAUDE: tool result was: hello"
    result = redact(text)
    assert result.text is text
    assert result.findings == ()


@settings(max_examples=200, deadline=None)
@given(
    sample=st.sampled_from(SAMPLES),
    before=st.text(max_size=200),
    after=st.text(max_size=200),
)
def test_secrets_are_redacted_inside_any_surrounding_text(
    sample: Sample, before: str, after: str
) -> None:
    result = redact(f"{before}\n{sample.text}\n{after}")
    for secret in sample.secrets:
        assert secret not in result.text


@settings(max_examples=300, deadline=None)
@given(text=st.text(max_size=500))
def test_redact_never_fails_and_only_replaces_what_it_reports(text: str) -> None:
    result = redact(text)
    if not result.findings:
        assert result.text == text
    else:
        assert result.text.count("[REDACTED:") >= len(result.findings)


def test_a_truncated_key_block_does_not_shield_the_key_after_it() -> None:
    # The first block has no END line, so its redaction takes the 8 KiB after its BEGIN; the
    # second BEGIN is inside those, and its END more than 64 KiB after the first BEGIN. The
    # second block is still redacted to its own END line, not cut where the first span stops.
    second_body = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC" * 2020
    text = (
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n"
        + "log line\n" * 200
        + f"-----BEGIN PRIVATE KEY-----\n{second_body}\n-----END PRIVATE KEY-----\nafter"
    )
    result = redact(text)
    assert second_body[-64:] not in result.text
    assert "-----END PRIVATE KEY-----" not in result.text
    assert result.text == "[REDACTED:private_key]\nafter"


@pytest.mark.parametrize("lead", ["İstanbul ", "…", "Straße ", "\ud800 ", "漢字 ", "K" * 3])
@pytest.mark.parametrize("sample", SAMPLES[::5], ids=lambda sample: sample.kind)
def test_secrets_after_non_ascii_text_are_redacted_in_place(lead: str, sample: Sample) -> None:
    # Characters whose lower case is longer (İ) or that are not ASCII at all must not shift
    # the positions the rules find in the lower-cased text.
    result = redact(f"{lead}{sample.text}")
    plain = redact(sample.text)
    assert result.text == f"{lead}{plain.text}"
    assert result.findings == plain.findings


@pytest.mark.parametrize(
    ("lookalike", "kind"),
    [
        ("task-list disk-usage ", "openai_project_key"),
        ("v1.2.3 e.g. a.b.c ", "discord_bot_token"),
        ("TASK DISK SKIP ", "twilio_api_key_and_token"),
        ("https://example.com/?q=1&page=2 ", "azure_sas_token"),
        ("keyword monkey key-value ", "mailgun_api_key"),
    ],
)
def test_a_secret_after_thousands_of_its_trigger_lookalikes_is_found(
    lookalike: str, kind: str
) -> None:
    # Each rule is tried at every occurrence of its trigger: a common one must cost no recall.
    sample = next(s for s in SAMPLES if s.kind == kind)
    padding = lookalike * 2000
    result = redact(f"{padding}\n{sample.text}\n{padding}")
    for secret in sample.secrets:
        assert secret not in result.text
    assert result.text.startswith(padding + "\n")
    assert result.text.endswith("\n" + padding)
    assert result.findings == redact(sample.text).findings


def test_a_jwt_with_a_long_payload_is_redacted_whole() -> None:
    payload = "eyJ" + "a" * 100_000
    token = f"eyJhbGciOiJIUzI1NiJ9.{payload}.c2lnbmF0dXJlc2lnbmF0dXJl"
    result = redact(f"token: {token} end")
    assert result.text == "token: [REDACTED:jwt] end"


def test_a_url_query_secret_is_found_whatever_the_case_of_its_name() -> None:
    result = redact("GET https://x.example/cb?Signature=abcdefgh12345678&next=1")
    assert result.text == "GET https://x.example/cb?Signature=[REDACTED:url_query_secret]&next=1"


@pytest.mark.parametrize("kind", ["rsa_4096_private_key", "pgp_private_key_long"])
def test_a_key_whose_begin_line_is_before_the_tail_is_not_kept_in_it(kind: str) -> None:
    # `cat ~/.ssh/id_rsa` of a 4096-bit key prints 3.2 KiB: a 2 KiB tail holds only the
    # body and END line; cut first, the filter never sees BEGIN. Only the END line rule
    # (the base64 lines above an END line) finds it then; redacted first, BEGIN does.
    sample = next(s for s in SAMPLES if s.kind == kind)
    text = sample.text + "done\n"
    assert "BEGIN" not in text[-2048:]
    assert redact(text[-2048:]).findings == ("private_key",)
    for tail in (redacted_tail(text, 2048), output_tail(text)):
        assert len(tail.encode()) <= 2048
        assert tail.endswith("done\n")
        for secret in sample.secrets:
            assert secret not in tail
            assert secret[-20:] not in tail


def test_redacted_tail_reads_only_what_can_matter_and_cuts_on_a_character() -> None:
    secret = "ghp_" + "a1B2" * 9
    text = "é" * 1000 + f" {secret} " + "x" * (REACH + 5000)
    assert redacted_tail(text, 10) == "x" * 10
    near = "é" * 3000 + f" {secret} end"
    tail = redacted_tail(near, 64)
    assert tail.endswith("[REDACTED:github_token] end")
    assert len(tail.encode()) <= 64
    assert tail.encode().decode() == tail


def test_an_output_that_fits_is_left_to_the_history_filter() -> None:
    short = "token ghp_" + "a1B2" * 9
    assert output_tail(short) is short


def _cut(text: str, limit: int) -> str:
    data = text.encode("utf-8", "surrogatepass")[-limit:]
    while data and data[0] & 0xC0 == 0x80:
        data = data[1:]
    return data.decode("utf-8", "surrogatepass")


@settings(max_examples=200, deadline=None)
@given(
    sample=st.sampled_from(SAMPLES),
    before=st.text(max_size=300),
    after=st.text(max_size=300),
    limit=st.integers(min_value=1, max_value=4096),
)
def test_redacted_tail_is_the_tail_of_the_whole_text_redacted(
    sample: Sample, before: str, after: str, limit: int
) -> None:
    text = f"{before}\n{sample.text}\n{after}"
    assert redacted_tail(text, limit) == _cut(redact(text).text, limit)


@pytest.mark.parametrize(
    ("run", "kind"),
    [
        ("sk-proj-", "openai_api_key"),
        ("sk-ant-", "anthropic_api_key"),
        ("-----BEGIN RSA PRIVATE KEY-----\nMIIE", "private_key"),
        ("glpat-", "gitlab_token"),
    ],
)
def test_a_run_of_one_literal_is_redacted_like_a_single_match(run: str, kind: str) -> None:
    # Thousands of literals in one run of a token's alphabet: each rule is tried once per
    # span it finds, so the result (and the cost) is that of one long token.
    text = "x " + run * 3000 + "AAAA1234567890abcdefghij" * 4 + " y"
    result = redact(text)
    assert result.text.startswith("x [REDACTED:")
    assert result.text.endswith(" y") or kind == "private_key"
    assert result.findings == (kind,)


def test_a_token_redacted_inside_a_url_keeps_its_marker_when_redacted_again() -> None:
    # `url_password` once read `[REDACTED` as the user and `github_token]` as the password of
    # the redacted URL: a second pass (over a cut tail, a re-encoded tool input) mangled the
    # marker into `[REDACTED:[REDACTED:url_password]`.
    token = "ghp_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z5A"
    once = redact(f"git clone https://{token}@github.com/acme/app.git")
    assert once.text == "git clone https://[REDACTED:github_token]@github.com/acme/app.git"
    assert redact(once.text) == type(once)(once.text, ())


def test_a_secret_around_a_marker_is_redacted_and_the_marker_kept() -> None:
    # Only the marker is taken out of a span: what the span holds besides it still goes.
    result = redact('{"password": "hunter2[REDACTED:github_token]x9Kq2mZ7"}')
    assert result.text == (
        '{"password": "[REDACTED:secret_assignment][REDACTED:github_token]'
        '[REDACTED:secret_assignment]"}'
    )
    assert redact(result.text).text == result.text


# Places a bare token is pasted in, to plant every kind's secret next to other markers.
_PLANTINGS = (
    "https://{}@github.com/x/y",
    "https://user:{}@host.example/path",
    "Authorization: Bearer {}",
    "export TOKEN={}",
    '{{"password": "{}"}}',
    "{}:{}",
    "--token {} --password {}",
    "[{}]({})",
    # The shapes of issue 21: a Dockerfile, the AWS CLI, escaped JSON, a sentence, a
    # continued line.
    "ENV API_TOKEN {}\nARG NPM_TOKEN={}",
    "aws configure set aws_secret_access_key {}",
    '{{"config":"{{\\"password\\":\\"{}\\"}}"}}',
    "the staging api key is {}.",
    "export TOKEN={}\\\n{}",
)


@settings(max_examples=300, deadline=None)
@given(
    samples=st.lists(st.sampled_from(SAMPLES), min_size=1, max_size=3),
    planting=st.sampled_from(_PLANTINGS),
    fillers=st.lists(st.text(max_size=40), min_size=4, max_size=4),
)
def test_redacting_is_idempotent_and_lets_no_planted_secret_through(
    samples: list[Sample], planting: str, fillers: list[str]
) -> None:
    bare = planting.format(*(samples[0].secrets[0],) * planting.count("{}"))
    pieces = [sample.text for sample in samples]
    lead, middle, before_marker, after_marker = fillers
    text = "\n".join([lead, *pieces, middle, bare, f"{before_marker}[REDACTED:{after_marker}"])
    once = redact(text)
    assert redact(once.text).text == once.text
    # Each sample's secrets go; a bare token without its context (an AWS secret key alone)
    # may stay where it was planted bare: that is the filter's documented limit.
    for sample in samples:
        for secret in sample.secrets:
            assert once.text.count(secret) <= bare.count(secret)


# Issue 21, point 13: shapes the filter missed, each as the exact text redact returns.
_GHP = "ghp_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z5A"
_KEY_ROWS = (
    "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj",
    "MzEfYyjiWA4R4/M2bS1GB4t7NXp98C3SC6dVMvDuictGeurT8jNbvJZHtCSuYEvu",
    "q7dJ0fXn2mV8u4a1b5yH==",
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            f"echo {base64.b64encode(_GHP.encode()).decode()} | base64 -d",
            "echo [REDACTED:github_token] | base64 -d",
        ),
        (
            "$ tail -n 4 key.pem\n" + "\n".join(_KEY_ROWS) + "\n-----END PRIVATE KEY-----\n$ ",
            "$ tail -n 4 key.pem\n[REDACTED:private_key]\n$ ",
        ),
        (
            '{"config":"{\\"password\\":\\"hunter2xyz\\"}"}',
            '{"config":"{\\"password\\":\\"[REDACTED:secret_assignment]\\"}"}',
        ),
        (
            '{"a":"{\\"b\\":\\"{\\\\\\"password\\\\\\":\\\\\\"hunter2xyz\\\\\\"}\\"}"}',
            '{"a":"{\\"b\\":\\"{\\\\\\"password\\\\\\":\\\\\\"[REDACTED:secret_assignment]'
            '\\\\\\"}\\"}"}',
        ),
        ("ENV API_TOKEN s3cr3tV4lue99", "ENV API_TOKEN [REDACTED:secret_assignment]"),
        ("ENV API_TOKEN=s3cr3tV4lue99", "ENV API_TOKEN=[REDACTED:secret_assignment]"),
        ("ARG NPM_TOKEN=s3cr3tV4lue99", "ARG NPM_TOKEN=[REDACTED:secret_assignment]"),
        (
            "aws configure set aws_secret_access_key wJalrXUtnFEMIK7MDENGbPxRfiCY3x4mp1eKEY",
            "aws configure set aws_secret_access_key [REDACTED:secret_assignment]",
        ),
        (
            "export TOKEN=abc123XYZ\\\ndef456UVW\nnext",
            "export TOKEN=[REDACTED:secret_assignment]\nnext",
        ),
        (
            "the staging api key is Zx9Qk2Lm7Np4Rt8Vw3Yb.",
            "the staging api key is [REDACTED:secret_assignment].",
        ),
    ],
    ids=[
        "base64_ghp",
        "pem_tail",
        "json_double_escaped",
        "json_triple_escaped",
        "dockerfile_env_space",
        "dockerfile_env_equals",
        "dockerfile_arg",
        "aws_configure_set",
        "line_continuation",
        "prose",
    ],
)
def test_issue_21_shapes_are_redacted(text: str, expected: str) -> None:
    result = redact(text)
    assert result.text == expected
    assert redact(result.text) == type(result)(result.text, ())


def test_a_shell_parameter_expansion_is_not_a_secret() -> None:
    text = 'curl -H "x-api-key: ${API_KEY:?missing}" -d "${TOKEN:?set TOKEN}" https://x.example'
    assert redact(text) == type(redact(text))(text, ())
    # Its default value, though, may be one.
    assert redact("${API_KEY:-s3cr3tV4lue99}").findings == ("secret_assignment",)


# Bare vendor tokens of the corpus that start with a prefix of 4 characters or more: their
# base64 is found at every offset the prefix may have in a 3-byte group.
_WRAPPABLE = [
    secret
    for sample in SAMPLES[::3]
    for secret in sample.secrets[:1]
    if any(
        secret.startswith(literal) and len(literal) >= 4
        for rule in VENDOR_RULES
        for literal in rule.triggers
    )
    and redact(secret).text != secret
]


@settings(max_examples=200, deadline=None)
@given(
    secret=st.sampled_from(_WRAPPABLE),
    lead=st.sampled_from(["", "\n", "u:", "user:", "token ", "x-access-token:"]),
    trail=st.sampled_from(["", "\n", " and more text after it"]),
    urlsafe=st.booleans(),
    context=st.sampled_from(["echo {} | base64 -d", "data:\n  value: {}\n", '{{"b": "{}"}}']),
)
def test_a_base64_wrapped_token_is_redacted_at_any_offset(
    secret: str, lead: str, trail: str, urlsafe: bool, context: str
) -> None:
    payload = f"{lead}{secret}{trail}".encode()
    encode = base64.urlsafe_b64encode if urlsafe else base64.b64encode
    encoded = encode(payload).decode()
    # The characters that encode the token's bytes alone must go.
    inner = encoded[-(-len(lead) // 3) * 4 : (len(lead) + len(secret)) // 3 * 4]
    result = redact(context.format(encoded))
    assert inner not in result.text
    assert result.findings
    assert redact(result.text).text == result.text


@settings(max_examples=300, deadline=None)
@given(sample=st.sampled_from(SAMPLES), cut=st.floats(min_value=0.05, max_value=0.95))
def test_a_secret_split_by_a_line_continuation_is_redacted_whole(
    sample: Sample, cut: float
) -> None:
    # ``abc\`` then ``def``: the shell reads ``abcdef``, and so does the filter.
    secret = max(sample.secrets, key=len)
    at = max(1, int(len(secret) * cut))
    text = sample.text.replace(secret, f"{secret[:at]}\\\n{secret[at:]}", 1)
    result = redact(text)
    whole = redact(sample.text).text  # a part may also be elsewhere (a certificate's head)
    for part in (secret[:at], secret[at:]):
        if len(part) >= 8:
            assert result.text.count(part) <= whole.count(part)
    assert redact(result.text).text == result.text


def test_decoding_base64_is_bounded() -> None:
    # Thousands of encoded prefixes, each in a run too short to hold a token: at most
    # _MAX_DECODES decodes of at most _DECODE_RUN characters each, never again in a run.
    encoded_prefix = base64.b64encode(b"ghp_").decode()[:5]
    text = f"{encoded_prefix}aaaa " * 20_000
    assert redact(text).findings == ()
    token = base64.b64encode(_GHP.encode()).decode()
    assert redact(f"{token} {text}").findings == ("github_token",)
    long_run = base64.b64encode(b"x" * 30_000 + _GHP.encode()).decode()
    assert redact(long_run).findings == ()  # beyond the run cap: the documented limit
