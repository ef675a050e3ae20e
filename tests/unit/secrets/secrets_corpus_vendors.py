"""Vendor tokens of the secret-filter corpus: a published prefix, then the token's alphabet.

Each kind is (how the token is made, the line it is pasted in). Shapes follow what the
vendors and credential scanners (gitleaks, trufflehog) document; every value is random.
The ``near_miss_*`` kinds are known formats a few characters short (cut by a terminal, a
log line or a typo): their prefix alone must be enough.
"""

from __future__ import annotations

from collections.abc import Callable

from secrets_gen import ALNUM, B64, DIGITS, HEX, LOWER, UPPER, URLSAFE, Gen

__all__ = ["VENDOR_KINDS"]

Make = Callable[[Gen], tuple[str, tuple[str, ...]]]


def _token(make: Callable[[Gen], str], line: str) -> Make:
    """A kind whose one secret ``make`` builds, shown in ``line`` (``{t}`` is the token)."""

    def sample(g: Gen) -> tuple[str, tuple[str, ...]]:
        token = make(g)
        return line.format(t=token), (token,)

    return sample


_TABLE: dict[str, tuple[Callable[[Gen], str], str]] = {
    "gitlab_runner_token": (
        lambda g: "glrt-" + g.s(URLSAFE, 20),
        "gitlab-runner register --non-interactive --token {t}",
    ),
    "gitlab_runner_registration_token": (
        lambda g: "GR1348941" + g.s(URLSAFE, 20),
        "gitlab-runner register --url https://gitlab.example.com -r {t}",
    ),
    "gitlab_ci_job_token": (
        lambda g: "glcbt-" + g.s(HEX, 2) + "_" + g.s(URLSAFE, 20),
        'curl --header "JOB-TOKEN: {t}" https://gitlab.example.com/api/v4/jobs/1/artifacts',
    ),
    "gitlab_deploy_token": (
        lambda g: "gldt-" + g.s(URLSAFE, 20),
        "deploy token created: {t} (store it now)",
    ),
    "gitlab_feed_token": (lambda g: "glft-" + g.s(URLSAFE, 20), "feed: /dashboard/feed?x {t}"),
    "slack_app_token": (
        lambda g: f"xapp-1-A{g.s(UPPER + DIGITS, 10)}-{g.s(DIGITS, 13)}-{g.s(HEX, 64)}",
        "SocketModeHandler(app, '{t}').start()",
    ),
    "slack_config_token": (
        lambda g: "xoxe.xoxp-1-" + g.s(ALNUM, 140),
        "slack config token rotated, new one {t}",
    ),
    "google_oauth_access_token": (
        lambda g: "ya29." + g.s(URLSAFE, 150),
        "$ gcloud auth print-access-token\n{t}",
    ),
    "google_oauth_refresh_token": (
        lambda g: "1//0" + g.s(URLSAFE, 60),
        "stored credentials, refresh with {t} when expired",
    ),
    "vault_service_token": (
        lambda g: "hvs." + g.s(URLSAFE, 90),
        "Key                  Value\n---                  -----\ntoken                {t}",
    ),
    "vault_batch_token": (lambda g: "hvb." + g.s(URLSAFE, 130), "VAULT_TOKEN {t} vault kv get"),
    "databricks_token": (
        lambda g: "dapi" + g.s(HEX, 32),
        "databricks configure --host https://adb-1.azuredatabricks.net <<< {t}",
    ),
    "atlassian_api_token": (
        lambda g: "ATATT3xFfGF0" + g.s(URLSAFE, 170) + "=" + g.s(HEX.upper(), 8),
        'curl --user me@example.com:"$T" # T was {t}',
    ),
    "linear_api_key": (
        lambda g: "lin_api_" + g.s(ALNUM, 40),
        "new LinearClient({{ apiKey: process.env.K }}) // K={t}",
    ),
    "notion_legacy_token": (lambda g: "secret_" + g.s(ALNUM, 43), "notion integration: {t}"),
    "notion_token": (
        lambda g: "ntn_" + g.s(DIGITS, 11) + g.s(ALNUM, 35),
        'Client(auth="{t}")',
    ),
    "postman_api_key": (
        lambda g: f"PMAK-{g.s(HEX, 24)}-{g.s(HEX, 34)}",
        "newman run collection.json --postman-api-key {t}",
    ),
    "sentry_user_token": (lambda g: "sntryu_" + g.s(HEX, 64), "sentry-cli login --auth {t}"),
    "sentry_org_token": (
        lambda g: "sntrys_eyJ" + g.s(ALNUM + "+/", 120),
        "SENTRY_ORG_TOKEN_VALUE {t} was written to .sentryclirc",
    ),
    "grafana_cloud_token": (lambda g: "glc_" + g.s(B64, 120) + "==", "grafana-cloud: {t}"),
    "grafana_service_account_token": (
        lambda g: f"glsa_{g.s(ALNUM, 32)}_{g.s(HEX, 8)}",
        "curl -H 'Authorization: Bearer' x # sa {t}",
    ),
    "facebook_access_token": (
        lambda g: "EAACEdEose0cBA" + g.s(ALNUM, 150),
        "https://graph.facebook.com/me?fields=id&x={t}",
    ),
    "twitter_bearer_token": (
        lambda g: "A" * 22 + g.s(ALNUM, 20) + "%3D" + g.s(ALNUM, 50),
        "tweepy.Client('{t}')",
    ),
    "azure_ad_client_secret": (
        lambda g: g.s(ALNUM, 3) + g.s(DIGITS, 1) + "Q~" + g.s(ALNUM + "_~.-", 34),
        "az ad sp credential reset output: {t}",
    ),
    "openrouter_api_key": (lambda g: "sk-or-v1-" + g.s(HEX, 64), "router key {t} in use"),
    "deepseek_api_key": (lambda g: "sk-" + g.s(HEX, 32), "OpenAI(base_url=u, api_key=k) # {t}"),
    "groq_api_key": (lambda g: "gsk_" + g.s(ALNUM, 52), "Groq(api_key='{t}')"),
    "xai_api_key": (lambda g: "xai-" + g.s(ALNUM, 80), "grok: {t}"),
    "perplexity_api_key": (lambda g: "pplx-" + g.s(ALNUM, 48), "pplx key {t}"),
    "replicate_api_token": (lambda g: "r8_" + g.s(ALNUM, 37), "replicate login {t}"),
    "langsmith_api_key": (
        lambda g: f"lsv2_pt_{g.s(HEX, 32)}_{g.s(HEX, 10)}",
        "tracing to LangSmith with {t}",
    ),
    "docker_hub_token": (
        lambda g: "dckr_pat_" + g.s(URLSAFE, 27),
        "echo {t} | docker login -u bob --password-stdin",
    ),
    "rubygems_api_key": (lambda g: "rubygems_" + g.s(HEX, 48), ":rubygems_api_key: {t}"),
    "tailscale_auth_key": (
        lambda g: f"tskey-auth-k{g.s(ALNUM, 11)}CNTRL-{g.s(ALNUM, 32)}",
        "tailscale up --authkey={t}",
    ),
    "planetscale_token": (lambda g: "pscale_tkn_" + g.s(URLSAFE, 43), "pscale auth {t}"),
    "new_relic_user_key": (lambda g: "NRAK-" + g.s(UPPER + DIGITS, 27), "newrelic {t}"),
    "doppler_token": (lambda g: "dp.pt." + g.s(ALNUM, 43), "doppler configure set token {t}"),
    "supabase_token": (lambda g: "sbp_" + g.s(HEX, 40), "supabase login --token {t}"),
    "figma_token": (lambda g: "figd_" + g.s(URLSAFE, 40), "X-Figma-Token {t}"),
    "dynatrace_token": (
        lambda g: f"dt0c01.{g.s(UPPER + DIGITS, 24)}.{g.s(ALNUM, 64)}",
        "Api-Token {t}",
    ),
    "terraform_cloud_token": (
        lambda g: f"{g.s(ALNUM, 14)}.atlasv1.{g.s(URLSAFE, 67)}",
        'credentials "app.terraform.io" {{ token = "{t}" }}',
    ),
    "alibaba_access_key_id": (lambda g: "LTAI" + g.s(ALNUM, 20), "aliyun configure: id {t}"),
    "pulumi_token": (lambda g: "pul-" + g.s(HEX, 40), "pulumi login with {t}"),
    "airtable_token": (
        lambda g: f"pat{g.s(ALNUM, 14)}.{g.s(HEX, 64)}",
        "Airtable('{t}')",
    ),
    "onepassword_service_account_token": (
        lambda g: "ops_eyJ" + g.s(ALNUM + "+/", 260),
        "op whoami # with {t}",
    ),
    "firebase_cloud_messaging_key": (
        lambda g: f"{g.s(URLSAFE, 11)}:APA91b{g.s(URLSAFE, 134)}",
        "fcm server key {t}",
    ),
    "contentful_token": (lambda g: "CFPAT-" + g.s(URLSAFE, 43), "contentful login {t}"),
    "sonarqube_token": (lambda g: "squ_" + g.s(HEX, 40), "sonar-scanner -Dsonar.login {t}"),
    "mapbox_secret_token": (
        lambda g: f"sk.eyJ1Ijoi{g.s(URLSAFE, 50)}.{g.s(URLSAFE, 22)}",
        "mapbox token {t}",
    ),
    "brevo_api_key": (
        lambda g: f"xkeysib-{g.s(HEX, 64)}-{g.s(ALNUM, 16)}",
        "sib_api_v3_sdk key {t}",
    ),
    "teams_webhook": (
        lambda g: f"{g.s(HEX, 8)}-{g.s(HEX, 4)}@{g.s(HEX, 8)}/IncomingWebhook/{g.s(HEX, 32)}",
        "curl -d @card.json https://acme.webhook.office.com/webhookb2/{t}",
    ),
    "adafruit_io_key": (lambda g: "aio_" + g.s(ALNUM, 28), "mqtt connect with {t}"),
    "buildkite_token": (lambda g: "bkua_" + g.s(HEX, 40), "bk agent uses {t}"),
    "circleci_token": (lambda g: f"CCIPAT_{g.s(ALNUM, 22)}_{g.s(HEX, 40)}", "circle {t}"),
    "clojars_token": (lambda g: "CLOJARS_" + g.s(HEX, 60), "deploy clojars {t}"),
    "cloudflare_origin_ca_key": (
        lambda g: f"v1.0-{g.s(HEX, 24)}-{g.s(HEX, 146)}",
        "X-Auth-User-Service-Key {t}",
    ),
    "dropbox_token": (lambda g: "sl." + g.s(URLSAFE, 140), "dbx = dropbox.Dropbox('{t}')"),
    "easypost_api_key": (lambda g: "EZAK" + g.s(ALNUM, 54), "easypost {t}"),
    "flutterwave_key": (lambda g: f"FLWSECK_TEST-{g.s('abcdefgh0123456789', 32)}-X", "flw {t}"),
    "flyio_token": (lambda g: "FlyV1 fm2_" + g.s(ALNUM + "+/=", 120), "fly deploy -a x # {t}"),
    "frameio_token": (lambda g: "fio-u-" + g.s(URLSAFE, 64), "frame.io {t}"),
    "harness_token": (
        lambda g: f"pat.{g.s(URLSAFE, 22)}.{g.s(ALNUM, 24)}.{g.s(ALNUM, 20)}",
        "harness login {t}",
    ),
    "heroku_platform_key": (lambda g: "HRKU-" + g.s(URLSAFE, 60), "heroku auth {t}"),
    "infracost_api_key": (lambda g: "ico-" + g.s(ALNUM, 32), "infracost configure set {t}"),
    "jfrog_api_key": (lambda g: "AKCp" + g.s(ALNUM, 69), "jf c add --apikey {t}"),
    "netlify_token": (lambda g: "nfp_" + g.s(ALNUM, 36), "netlify deploy --auth {t}"),
    "nuget_api_key": (lambda g: "oy2" + g.s(LOWER + DIGITS, 43), "dotnet nuget push -k {t}"),
    "octopus_deploy_api_key": (lambda g: "API-" + g.s(UPPER + DIGITS, 26), "octo {t}"),
    "onepassword_secret_key": (
        lambda g: "A3-" + "-".join(g.s(UPPER + DIGITS, n) for n in (6, 6, 5, 5, 5, 5)),
        "1Password Emergency Kit: {t}",
    ),
    "paypal_braintree_token": (
        lambda g: f"access_token$production${g.s(LOWER + DIGITS, 16)}${g.s(HEX, 32)}",
        "braintree {t}",
    ),
    "plaid_access_token": (
        lambda g: (
            f"access-sandbox-{g.s(HEX, 8)}-{g.s(HEX, 4)}-{g.s(HEX, 4)}-{g.s(HEX, 4)}-{g.s(HEX, 12)}"
        ),
        "plaid item {t}",
    ),
    "prefect_api_key": (lambda g: "pnu_" + g.s(ALNUM, 36), "prefect cloud login -k {t}"),
    "readme_api_key": (lambda g: "rdme_" + g.s(LOWER + DIGITS, 70), "rdme openapi --key {t}"),
    "render_api_key": (lambda g: "rnd_" + g.s(ALNUM, 32), "render {t}"),
    "scalingo_token": (lambda g: "tk-us-" + g.s(URLSAFE, 48), "scalingo login {t}"),
    "shippo_token": (lambda g: "shippo_live_" + g.s(HEX, 40), "shippo {t}"),
    "sourcegraph_token": (lambda g: "sgp_" + g.s(HEX, 16) + "_" + g.s(HEX, 40), "src {t}"),
    "near_miss_anthropic_key": (
        lambda g: "sk-ant-api03-" + g.s(URLSAFE, 40),
        "export ANTHROPIC=x; echo {t}",
    ),
    "near_miss_github_token": (lambda g: "ghp_" + g.s(ALNUM, 30), "token was {t} (copied short)"),
    "near_miss_openai_key": (lambda g: "sk-proj-" + g.s(URLSAFE, 30), "key: sk… no: {t}"),
    "near_miss_stripe_key": (lambda g: "sk_live_" + g.s(ALNUM, 14), "charged with {t}"),
    "near_miss_gitlab_token": (lambda g: "glpat-" + g.s(URLSAFE, 17), "gitlab {t}"),
}

VENDOR_KINDS: dict[str, Make] = {kind: _token(make, line) for kind, (make, line) in _TABLE.items()}
