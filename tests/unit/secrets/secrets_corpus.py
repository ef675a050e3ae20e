"""A deterministic corpus of fake credentials, one or more samples per kind.

Every value is generated here from a seeded PRNG in the documented shape of the real thing
(prefix, alphabet, length, checksum-free), so none of them is, or was ever, a real secret.
Each sample embeds the secret in the context it is usually pasted in (an env line, a config
file, a command, a log line), because that is where a transcript carries it.
"""

from __future__ import annotations

import base64
import json
import string
from collections.abc import Callable
from dataclasses import dataclass

from secrets_corpus_context import CONTEXT_KINDS
from secrets_corpus_vendors import VENDOR_KINDS
from secrets_gen import ALNUM, B64, DIGITS, HEX, UPPER, URLSAFE, Gen, pem

__all__ = ["KINDS", "Sample", "corpus"]


@dataclass(frozen=True)
class Sample:
    """``text`` as it would appear in a transcript; ``secrets`` must all vanish from it."""

    kind: str
    text: str
    secrets: tuple[str, ...]


def _aws_access_key_id(g: Gen) -> tuple[str, tuple[str, ...]]:
    key = "AKIA" + g.s(UPPER + "234567", 16)
    return f"aws configure set aws_access_key_id {key}", (key,)


def _aws_secret_access_key(g: Gen) -> tuple[str, tuple[str, ...]]:
    secret = g.s(ALNUM + "+/", 40)
    return f"[default]\naws_secret_access_key = {secret}\nregion = eu-west-1", (secret,)


def _gcp_service_account(g: Gen) -> tuple[str, tuple[str, ...]]:
    block, body = pem(g, "PRIVATE KEY", 1216)
    doc = {
        "type": "service_account",
        "project_id": "demo-project-123",
        "private_key_id": g.s(HEX, 40),
        "private_key": block + "\n",
        "client_email": "ci@demo-project-123.iam.gserviceaccount.com",
    }
    text = json.dumps(doc, indent=2)
    return text, (body[64:128], body[-40:])


def _azure_storage_key(g: Gen) -> tuple[str, tuple[str, ...]]:
    key = g.b64(64)
    text = (
        "DefaultEndpointsProtocol=https;AccountName=demostore;"
        f"AccountKey={key};EndpointSuffix=core.windows.net"
    )
    return text, (key,)


def _azure_sas(g: Gen) -> tuple[str, tuple[str, ...]]:
    sig = g.s(ALNUM, 43) + "%3D"
    url = (
        "https://demostore.blob.core.windows.net/c/file.txt?sv=2022-11-02&ss=b&srt=o"
        f"&sp=r&se=2030-01-01T00:00:00Z&sig={sig}"
    )
    return f"curl -O '{url}'", (sig,)


def _github_classic(g: Gen) -> tuple[str, tuple[str, ...]]:
    token = "ghp_" + g.s(ALNUM, 36)
    return f"git clone https://{token}@github.com/acme/app.git", (token,)


def _github_fine_grained(g: Gen) -> tuple[str, tuple[str, ...]]:
    token = "github_pat_" + g.s(ALNUM, 22) + "_" + g.s(ALNUM, 59)
    return f'gh auth login --with-token <<< "{token}"', (token,)


def _github_oauth(g: Gen) -> tuple[str, tuple[str, ...]]:
    token = "gho_" + g.s(ALNUM, 36)
    return f"github.com:\n    oauth_token: {token}\n    user: octo", (token,)


def _github_app(g: Gen) -> tuple[str, tuple[str, ...]]:
    token = "ghs_" + g.s(ALNUM, 36)
    return f"installation token {token} expires in 1h", (token,)


def _gitlab_pat(g: Gen) -> tuple[str, tuple[str, ...]]:
    token = "glpat-" + g.s(URLSAFE, 20)
    return f'curl --header "PRIVATE-TOKEN: {token}" https://gitlab.example.com/api/v4/projects', (
        token,
    )


def _slack_bot(g: Gen) -> tuple[str, tuple[str, ...]]:
    token = f"xoxb-{g.s(DIGITS, 12)}-{g.s(DIGITS, 13)}-{g.s(ALNUM, 24)}"
    return f"slack_client = WebClient(token='{token}')", (token,)


def _slack_user(g: Gen) -> tuple[str, tuple[str, ...]]:
    token = f"xoxp-{g.s(DIGITS, 12)}-{g.s(DIGITS, 12)}-{g.s(DIGITS, 13)}-{g.s(HEX, 32)}"
    return f"using user token {token}", (token,)


def _slack_webhook(g: Gen) -> tuple[str, tuple[str, ...]]:
    path = f"T{g.s(UPPER + DIGITS, 10)}/B{g.s(UPPER + DIGITS, 10)}/{g.s(ALNUM, 24)}"
    url = f"https://hooks.slack.com/services/{path}"
    return f'curl -X POST -d \'{{"text":"deployed"}}\' {url}', (path,)


def _discord_bot(g: Gen) -> tuple[str, tuple[str, ...]]:
    token = "M" + g.s(ALNUM, 23) + "." + g.s(URLSAFE, 6) + "." + g.s(URLSAFE, 38)
    return f"client.run('{token}')", (token,)


def _discord_webhook(g: Gen) -> tuple[str, tuple[str, ...]]:
    secret = g.s(URLSAFE, 68)
    url = f"https://discord.com/api/webhooks/{g.s(DIGITS, 18)}/{secret}"
    return f"WEBHOOK = {url!r}", (secret,)


def _stripe_live(g: Gen) -> tuple[str, tuple[str, ...]]:
    key = "sk_live_" + g.s(ALNUM, 99)
    return f'stripe.api_key = "{key}"', (key,)


def _stripe_test(g: Gen) -> tuple[str, tuple[str, ...]]:
    key = "sk_test_" + g.s(ALNUM, 24)
    restricted = "rk_live_" + g.s(ALNUM, 24)
    return f"STRIPE_SECRET={key}\n# restricted: {restricted}", (key, restricted)


def _twilio(g: Gen) -> tuple[str, tuple[str, ...]]:
    key = "SK" + g.s(HEX, 32)
    token = g.s(HEX, 32)
    return (
        f"client = Client('{key}', auth_token='{token}', account_sid='AC{g.s(HEX, 32)}')",
        (key, token),
    )


def _sendgrid(g: Gen) -> tuple[str, tuple[str, ...]]:
    key = f"SG.{g.s(URLSAFE, 22)}.{g.s(URLSAFE, 43)}"
    return f"sg = SendGridAPIClient('{key}')", (key,)


def _mailgun(g: Gen) -> tuple[str, tuple[str, ...]]:
    key = "key-" + g.s(HEX, 32)
    return f"curl -s --user 'api:{key}' https://api.mailgun.net/v3/mg.example.com/messages", (key,)


def _mailchimp(g: Gen) -> tuple[str, tuple[str, ...]]:
    key = g.s(HEX, 32) + "-us12"
    return f"mailchimp.set_config({{'api_key': '{key}'}})", (key,)


def _openai_legacy(g: Gen) -> tuple[str, tuple[str, ...]]:
    key = "sk-" + g.s(ALNUM, 20) + "T3BlbkFJ" + g.s(ALNUM, 20)
    return f"openai.api_key = '{key}'", (key,)


def _openai_project(g: Gen) -> tuple[str, tuple[str, ...]]:
    key = "sk-proj-" + g.s(URLSAFE, 74) + "T3BlbkFJ" + g.s(URLSAFE, 74)
    return f"Using key {key} for the eval run", (key,)


def _anthropic(g: Gen) -> tuple[str, tuple[str, ...]]:
    key = "sk-ant-api03-" + g.s(URLSAFE, 93) + "AA"
    return f'client = anthropic.Anthropic(api_key="{key}")', (key,)


def _huggingface(g: Gen) -> tuple[str, tuple[str, ...]]:
    token = "hf_" + g.s(string.ascii_letters, 34)
    return f"huggingface-cli login --token {token}", (token,)


def _npm(g: Gen) -> tuple[str, tuple[str, ...]]:
    token = "npm_" + g.s(ALNUM, 36)
    return f"//registry.npmjs.org/:_authToken={token}", (token,)


def _pypi(g: Gen) -> tuple[str, tuple[str, ...]]:
    token = "pypi-AgEIcHlwaS5vcmc" + g.s(URLSAFE, 150)
    return f"[pypi]\n  username = __token__\n  password = {token}", (token,)


def _jwt(g: Gen) -> tuple[str, tuple[str, ...]]:
    def part(obj: dict[str, object]) -> str:
        return base64.urlsafe_b64encode(json.dumps(obj).encode()).decode().rstrip("=")

    token = ".".join(
        [
            part({"alg": "HS256", "typ": "JWT"}),
            part({"sub": g.s(DIGITS, 10), "name": "Jane", "iat": 1700000000}),
            g.s(URLSAFE, 43),
        ]
    )
    return f"Authorization: Bearer {token}", (token,)


def _bearer_header(g: Gen) -> tuple[str, tuple[str, ...]]:
    token = g.s(ALNUM, 40)
    return f'curl -H "Authorization: Bearer {token}" https://api.example.com/v1/me', (token,)


def _basic_auth_header(g: Gen) -> tuple[str, tuple[str, ...]]:
    cred = base64.b64encode(f"{g.word()}:{g.password()}".encode()).decode()
    return f"Authorization: Basic {cred}", (cred,)


def _rsa_private_key(g: Gen) -> tuple[str, tuple[str, ...]]:
    block, body = pem(g, "RSA PRIVATE KEY", 1190)
    return f"$ cat ~/.ssh/id_rsa\n{block}\n", (body[:64], body[-30:])


def _ec_private_key(g: Gen) -> tuple[str, tuple[str, ...]]:
    block, body = pem(g, "EC PRIVATE KEY", 121)
    return block, (body[:64], body[-30:])


def _openssh_private_key(g: Gen) -> tuple[str, tuple[str, ...]]:
    block, body = pem(g, "OPENSSH PRIVATE KEY", 400)
    return f"Contents of id_ed25519:\n{block}", (body[:64], body[-30:])


def _pgp_private_key(g: Gen) -> tuple[str, tuple[str, ...]]:
    body = g.b64(600)
    lines = "\n".join(body[i : i + 64] for i in range(0, len(body), 64))
    block = (
        "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n"
        f"{lines}\n={g.s(B64, 4)}\n-----END PGP PRIVATE KEY BLOCK-----"
    )
    return block, (body[:64], body[-30:])


def _password_in_url(g: Gen) -> tuple[str, tuple[str, ...]]:
    password = g.password()
    return f"pip install -i https://{g.word()}:{password}@pypi.internal.example/simple pkg", (
        password,
    )


def _dotenv_api_key(g: Gen) -> tuple[str, tuple[str, ...]]:
    value = g.s(ALNUM, 32)
    other = g.s(ALNUM, 24)
    return f"DEBUG=false\nAPI_KEY={value}\nexport SERVICE_TOKEN='{other}'\nPORT=8080", (
        value,
        other,
    )


def _dotenv_password(g: Gen) -> tuple[str, tuple[str, ...]]:
    value = g.password()
    second = g.password()
    return f'DB_HOST=db\nPASSWORD={value}\nSMTP_PASS="{second}"', (value, second)


def _postgres_url(g: Gen) -> tuple[str, tuple[str, ...]]:
    password = g.password()
    return f"DATABASE_URL=postgresql://{g.word()}:{password}@db.internal:5432/app", (password,)


def _mongodb_url(g: Gen) -> tuple[str, tuple[str, ...]]:
    password = g.s(ALNUM, 16)
    url = f"mongodb+srv://{g.word()}:{password}@cluster0.ab1cd.mongodb.net/test?retryWrites=true"
    return f"client = MongoClient('{url}')", (password,)


def _redis_url(g: Gen) -> tuple[str, tuple[str, ...]]:
    password = g.s(ALNUM, 20)
    return f"redis-cli -u redis://:{password}@cache.internal:6379/0 ping", (password,)


def _heroku(g: Gen) -> tuple[str, tuple[str, ...]]:
    key = f"{g.s(HEX, 8)}-{g.s(HEX, 4)}-{g.s(HEX, 4)}-{g.s(HEX, 4)}-{g.s(HEX, 12)}"
    return f"HEROKU_API_KEY={key} heroku apps", (key,)


def _digitalocean(g: Gen) -> tuple[str, tuple[str, ...]]:
    token = "dop_v1_" + g.s(HEX, 64)
    return f"doctl auth init --access-token {token}", (token,)


def _shopify(g: Gen) -> tuple[str, tuple[str, ...]]:
    token = "shpat_" + g.s(HEX, 32)
    secret = "shpss_" + g.s(HEX, 32)
    return f"X-Shopify-Access-Token: {token}\nshared secret {secret}", (token, secret)


def _telegram(g: Gen) -> tuple[str, tuple[str, ...]]:
    token = f"{g.s(DIGITS, 10)}:AA{g.s(URLSAFE, 33)}"
    return f"curl https://api.telegram.org/bot{token}/getMe", (token,)


def _google_api_key(g: Gen) -> tuple[str, tuple[str, ...]]:
    key = "AIza" + g.s(URLSAFE, 35)
    return f"https://maps.googleapis.com/maps/api/geocode/json?address=x&key={key}", (key,)


def _google_oauth_secret(g: Gen) -> tuple[str, tuple[str, ...]]:
    secret = "GOCSPX-" + g.s(URLSAFE, 28)
    return f'"client_secret": "{secret}"', (secret,)


def _datadog(g: Gen) -> tuple[str, tuple[str, ...]]:
    api = g.s(HEX, 32)
    app = g.s(HEX, 40)
    return f"DD_API_KEY={api} DD_APP_KEY={app} datadog-agent run", (api, app)


def _square(g: Gen) -> tuple[str, tuple[str, ...]]:
    token = "EAAA" + g.s(URLSAFE, 60)
    return f"square_access_token: {token}", (token,)


def _json_password(g: Gen) -> tuple[str, tuple[str, ...]]:
    password = g.password()
    return json.dumps({"user": g.word(), "password": password, "host": "db"}), (password,)


def _cli_password_flag(g: Gen) -> tuple[str, tuple[str, ...]]:
    password = g.password()
    return f"mysql -h db -u root --password={password} app < dump.sql", (password,)


def _age_secret_key(g: Gen) -> tuple[str, tuple[str, ...]]:
    key = "AGE-SECRET-KEY-1" + g.s(UPPER + DIGITS, 58)
    return f"# created: 2026-01-01\n{key}", (key,)


KINDS: dict[str, Callable[[Gen], tuple[str, tuple[str, ...]]]] = {
    "aws_access_key_id": _aws_access_key_id,
    "aws_secret_access_key": _aws_secret_access_key,
    "gcp_service_account_key": _gcp_service_account,
    "azure_storage_connection_string": _azure_storage_key,
    "azure_sas_token": _azure_sas,
    "github_classic_pat": _github_classic,
    "github_fine_grained_pat": _github_fine_grained,
    "github_oauth_token": _github_oauth,
    "github_app_token": _github_app,
    "gitlab_pat": _gitlab_pat,
    "slack_bot_token": _slack_bot,
    "slack_user_token": _slack_user,
    "slack_webhook": _slack_webhook,
    "discord_bot_token": _discord_bot,
    "discord_webhook": _discord_webhook,
    "stripe_live_key": _stripe_live,
    "stripe_test_and_restricted_key": _stripe_test,
    "twilio_api_key_and_token": _twilio,
    "sendgrid_api_key": _sendgrid,
    "mailgun_api_key": _mailgun,
    "mailchimp_api_key": _mailchimp,
    "openai_legacy_key": _openai_legacy,
    "openai_project_key": _openai_project,
    "anthropic_api_key": _anthropic,
    "huggingface_token": _huggingface,
    "npm_token": _npm,
    "pypi_token": _pypi,
    "jwt": _jwt,
    "bearer_header": _bearer_header,
    "basic_auth_header": _basic_auth_header,
    "rsa_private_key": _rsa_private_key,
    "ec_private_key": _ec_private_key,
    "openssh_private_key": _openssh_private_key,
    "pgp_private_key": _pgp_private_key,
    "password_in_url": _password_in_url,
    "dotenv_api_key": _dotenv_api_key,
    "dotenv_password": _dotenv_password,
    "postgres_url": _postgres_url,
    "mongodb_url": _mongodb_url,
    "redis_url": _redis_url,
    "heroku_api_key": _heroku,
    "digitalocean_token": _digitalocean,
    "shopify_tokens": _shopify,
    "telegram_bot_token": _telegram,
    "google_api_key": _google_api_key,
    "google_oauth_client_secret": _google_oauth_secret,
    "datadog_keys": _datadog,
    "square_access_token": _square,
    "json_password_field": _json_password,
    "cli_password_flag": _cli_password_flag,
    "age_secret_key": _age_secret_key,
    **VENDOR_KINDS,
    **CONTEXT_KINDS,
}


def corpus(samples_per_kind: int = 3, seed: int = 5) -> list[Sample]:
    """``samples_per_kind`` samples of every kind; the same list for the same arguments."""
    out: list[Sample] = []
    for index, (kind, make) in enumerate(KINDS.items()):
        for n in range(samples_per_kind):
            text, secrets = make(Gen(seed * 100_003 + index * 1009 + n))
            out.append(Sample(kind, text, secrets))
    return out
