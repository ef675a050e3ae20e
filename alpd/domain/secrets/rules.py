"""The secret filter's rule table: one ``Rule`` per credential shape, found from a literal.

Every rule names the literals each of its matches contains (``ghp_``, ``AKIA``, ``-----BEGIN``)
and how far before such a literal a match starts; ``alpd.domain.secrets.filter`` finds all literals
of all rules in one Aho-Corasick pass and tries each rule, anchored, only there. So a rule here
costs nothing on a text without its literal, and a literal that is common in prose (``sk-``,
``key-``) costs one anchored attempt per occurrence.

Two families, in this order:

* **vendor tokens** (this module): a prefix the vendor publishes (``glpat-``, ``hvs.``,
  ``ya29.``, ``lin_api_`` …), then the token's alphabet. Minimum lengths are deliberately
  below the documented ones: a token cut short by a terminal, a log line or a typo is still
  a credential, and the prefix alone already says what it is. The shapes follow what
  credential scanners (gitleaks, trufflehog) and the vendors document; the regexes are our
  own.
* **context rules** (``alpd.domain.secrets.context_rules``): key blocks, credentials in URLs,
headers,
  command lines (``mysql -pPW``, ``curl -u user:PW``) and files (``.netrc``, ``.pgpass``).

A rule's secret is its group ``s`` (or ``s2``, ``s3``) where it has one, else its whole match.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

__all__ = ["VENDOR_RULES", "Rule", "rule"]


@dataclass(frozen=True, slots=True, eq=False)
class Rule:
    """One detector: its regex, the literals every match of it contains, and where a match
    starts relative to them.

    Every match holds one of ``triggers`` at one of the distances ``starts`` from its first
    character, so the regex is only ever tried, anchored, at those few positions around a
    trigger's occurrences (found for all rules in one pass): a text holding no trigger costs
    nothing, and a common trigger costs one anchored attempt per occurrence, never a scan of
    the whole text. Rules compare (and hash) by identity: the engine keys its per-text
    state by rule.
    """

    kind: str
    pattern: re.Pattern[str]
    triggers: tuple[str, ...]
    starts: tuple[int, ...] = (0,)
    # Triggers and pattern are matched against the lower-cased text (so both are written in
    # lower case): far faster than ``re.IGNORECASE``. Positions are the same in both.
    folded: bool = False
    # For a rule without a literal in it: a literal-led regex whose matches stand for the
    # trigger occurrences (``starts`` counted from their start).
    locator: re.Pattern[str] | None = None
    # The match starts where the trigger's line starts (``.pgpass`` lines), not at a distance.
    at_line_start: bool = False
    # A last look at the secret the pattern found (a placeholder, a variable reference, a
    # base64 blob that decodes to a certificate rather than a key): False keeps the text.
    check: Callable[[str], bool] | None = None
    # A block (a key): ``pattern`` is its opening line; the secret runs to the end of the
    # first ``closing`` match starting within ``reach`` characters after it, else the
    # ``fallback`` characters after the opening (a block cut short).
    closing: re.Pattern[str] | None = None
    reach: int = 0
    fallback: int = 0


def rule(
    kind: str,
    pattern: str,
    *triggers: str,
    starts: Iterable[int] = (0,),
    folded: bool = False,
    locator: str | None = None,
    at_line_start: bool = False,
    check: Callable[[str], bool] | None = None,
    closing: str | None = None,
    reach: int = 0,
    fallback: int = 0,
) -> Rule:
    return Rule(
        kind,
        re.compile(pattern),
        triggers,
        tuple(sorted(starts)),
        folded,
        re.compile(locator) if locator else None,
        at_line_start,
        check,
        re.compile(closing) if closing else None,
        reach,
        fallback,
    )


def _prefixed(kind: str, prefixes: Iterable[str], body: str) -> Rule:
    """A token that is one of ``prefixes`` (each its own trigger) then ``body``."""
    literals = tuple(prefixes)
    alternatives = "|".join(re.escape(p) for p in sorted(literals, key=len, reverse=True))
    return rule(kind, rf"\b(?:{alternatives}){body}", *literals)


# Where a token must not go on: its alphabet, so a longer word holding a prefix is not cut.
_END = r"(?![A-Za-z0-9_-])"

VENDOR_RULES: tuple[Rule, ...] = (
    rule("age_secret_key", r"AGE-SECRET-KEY-1[0-9A-Z]{40,58}", "AGE-SECRET-KEY-1"),
    rule(
        "aws_access_key_id",
        r"\b(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z2-7]{16}\b",
        "AKIA",
        "ASIA",
        "ABIA",
        "ACCA",
        "A3T",
    ),
    rule(
        "github_token",
        r"\b(?:gh[pousr]_[A-Za-z0-9]{20,255}|github_pat_[A-Za-z0-9_]{40,255})\b",
        "ghp_",
        "gho_",
        "ghu_",
        "ghs_",
        "ghr_",
        "github_pat_",
    ),
    # Personal, deploy, pipeline-trigger, runner, SCIM, CI job, feed, incoming-mail, agent
    # and OAuth-application tokens, and the legacy runner registration token.
    _prefixed(
        "gitlab_token",
        ("glpat-", "gldt-", "glptt-", "glrt-", "glsoat-", "glcbt-", "glft-", "glimt-"),
        r"[A-Za-z0-9_.-]{16,}",
    ),
    _prefixed("gitlab_token", ("glagent-", "gloas-"), r"[A-Za-z0-9_-]{20,}"),
    rule("gitlab_token", r"\bGR1348941[A-Za-z0-9_-]{16,}", "GR1348941"),
    rule(
        "slack_token",
        r"\b(?:xox[abposrec]-|xoxe\.xox[bp]-|xapp-)[A-Za-z0-9-]{10,}",
        "xox",
        "xapp-",
    ),
    rule(
        "slack_webhook",
        r"hooks\.slack\.com/(?:services|workflows|triggers)/(?P<s>[A-Za-z0-9/_-]{20,})",
        "hooks.slack.com",
    ),
    rule(
        "teams_webhook",
        r"\.webhook\.office\.com/webhookb2/(?P<s>[A-Za-z0-9@/_-]{20,})",
        ".webhook.office.com/webhookb2/",
    ),
    rule(
        "discord_webhook",
        r"discord(?:app)?\.com/api/webhooks/\d+/(?P<s>[\w-]{40,})",
        "/api/webhooks/",
        starts=(len("discord.com"), len("discordapp.com")),
    ),
    rule(
        "discord_token",
        r"\b[MNO][A-Za-z\d_-]{23,25}\.[\w-]{6}\.[\w-]{27,38}\b",
        # The first dot of every token; only the dot is consumed (the rest is a lookahead),
        # so no candidate can swallow the next one's dot.
        locator=r"\.(?=[\w-]{6}\.[\w-]{27})",
        starts=(24, 25, 26),
    ),
    rule(
        "stripe_key",
        r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{10,}\b|\bwhsec_[A-Za-z0-9]{20,}",
        "_live_",
        "_test_",
        "whsec_",
        starts=(0, 2),
    ),
    rule("twilio_api_key", r"\bSK[0-9a-fA-F]{32}\b", "SK"),
    rule("sendgrid_api_key", r"\bSG\.[\w-]{16,}\.[\w-]{20,}", "SG."),
    rule(
        "brevo_api_key",
        r"\bx(?:keysib|smtpsib)-[a-f0-9]{40,}-[A-Za-z0-9]{8,}",
        "xkeysib-",
        "xsmtpsib-",
    ),
    rule("mailgun_api_key", r"\bkey-[0-9a-f]{32}\b", "key-"),
    rule("mailchimp_api_key", r"\b[0-9a-f]{32}-us\d{1,2}\b", "-us", starts=(32,)),
    # Anthropic (api, admin): the prefix alone; a key cut short is still one.
    rule("anthropic_api_key", r"\bsk-ant-[A-Za-z0-9_-]{16,}", "sk-ant-"),
    rule(
        "openai_api_key",
        # (Bounded before the marker: an unbounded run would be re-scanned at every ``sk-``.)
        r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{16,256}T3BlbkFJ[A-Za-z0-9_-]{16,}"
        r"|\bsk-(?:proj|svcacct|admin|None)-[A-Za-z0-9_-]{20,}",
        "sk-",
    ),
    rule("openrouter_api_key", r"\bsk-or-v1-[a-f0-9]{32,}", "sk-or-"),
    rule("deepseek_api_key", r"\bsk-[a-f0-9]{32}\b", "sk-"),
    _prefixed("groq_api_key", ("gsk_",), r"[A-Za-z0-9]{40,}" + _END),
    _prefixed("xai_api_key", ("xai-",), r"[A-Za-z0-9]{60,}" + _END),
    _prefixed("perplexity_api_key", ("pplx-",), r"[A-Za-z0-9]{40,}" + _END),
    _prefixed("replicate_api_token", ("r8_",), r"[A-Za-z0-9]{30,}" + _END),
    _prefixed("langsmith_api_key", ("lsv2_pt_", "lsv2_sk_"), r"[a-f0-9]{24,}_[a-f0-9]{6,}"),
    _prefixed("huggingface_token", ("hf_", "api_org_"), r"[A-Za-z0-9]{24,}\b"),
    rule("npm_token", r"\bnpm_[A-Za-z0-9]{30,}\b", "npm_"),
    rule("pypi_token", r"\bpypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{40,}", "pypi-AgEI"),
    _prefixed("rubygems_api_key", ("rubygems_",), r"[a-f0-9]{40,}\b"),
    rule("clojars_token", r"\bCLOJARS_[A-Za-z0-9]{50,}", "CLOJARS_"),
    _prefixed("nuget_api_key", ("oy2",), r"[a-z0-9]{43}\b"),
    _prefixed("docker_hub_token", ("dckr_pat_", "dckr_oat_"), r"[A-Za-z0-9_-]{20,}"),
    rule("digitalocean_token", r"\bdo[opr]_v1_[a-f0-9]{48,}\b", "_v1_", starts=(3,)),
    rule(
        "shopify_token",
        r"\bshp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}\b",
        "shpat_",
        "shpss_",
        "shpca_",
        "shppa_",
    ),
    rule("google_api_key", r"\bAIza[0-9A-Za-z_-]{30,35}" + _END, "AIza"),
    rule("google_oauth_secret", r"\bGOCSPX-[A-Za-z0-9_-]{20,28}" + _END, "GOCSPX-"),
    rule("google_oauth_token", r"\bya29\.[0-9A-Za-z_-]{20,}", "ya29."),
    rule("google_oauth_token", r"(?<![\w/])1//0[0-9A-Za-z_-]{30,}", "1//0"),
    rule(
        "firebase_cloud_messaging_key",
        r"\b[A-Za-z0-9_-]{11}:APA91b[A-Za-z0-9_-]{100,}",
        ":APA91b",
        starts=(11,),
    ),
    rule(
        "square_token",
        r"\b(?:EAAA|sq0atp-|sq0csp-)[A-Za-z0-9_-]{22,}",
        "EAAA",
        "sq0atp-",
        "sq0csp-",
    ),
    rule("facebook_access_token", r"\bEAA[A-Za-z0-9]{80,}", "EAA"),
    # Twitter/X app bearer tokens: 20 or more A, then the token (often with a %3D); not
    # base64 zeros (a character other than A must follow the run). Located by a regex on the
    # run (one candidate per run): as a literal, a long run of A would be one automaton hit
    # per character.
    rule(
        "twitter_bearer_token",
        r"(?<![A-Za-z0-9+/])A{20,}[B-Za-z0-9%][A-Za-z0-9%]{29,}",
        locator="A" * 20 + "+",
    ),
    rule(
        "telegram_bot_token",
        r"(?<!\d)\d{8,10}:AA[A-Za-z0-9_-]{33}(?![A-Za-z0-9_-])",
        ":AA",
        starts=(8, 9, 10),
    ),
    rule("jwt", r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*", "eyJ"),
    rule(
        "azure_storage_key",
        r"(?:AccountKey|SharedAccessKey)=(?P<s>[A-Za-z0-9+/=]{20,})",
        "AccountKey=",
        "SharedAccessKey=",
    ),
    # Azure AD (Entra) client secrets: three characters, a digit, then ``Q~``.
    rule(
        "azure_ad_client_secret",
        r"(?<![\w~.-])[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.-]{28,34}(?![\w~.-])",
        "Q~",
        starts=(4,),
    ),
    rule("vault_token", r"\bhv[sbr]\.[A-Za-z0-9_-]{20,}", "hvs.", "hvb.", "hvr."),
    rule(
        "terraform_cloud_token",
        r"\b[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{50,}",
        ".atlasv1.",
        starts=(14,),
    ),
    rule("databricks_token", r"\bdapi[a-f0-9]{32}(?:-\d)?\b", "dapi"),
    rule("atlassian_api_token", r"\bAT[AC]TT3[A-Za-z0-9_=-]{50,}", "ATATT3", "ATCTT3"),
    _prefixed("linear_api_key", ("lin_api_",), r"[A-Za-z0-9]{30,}"),
    _prefixed("linear_api_key", ("lin_oauth_",), r"[a-f0-9]{40,}"),
    rule("notion_token", r"\bsecret_[A-Za-z0-9]{43}\b|\bntn_[A-Za-z0-9]{40,}", "secret_", "ntn_"),
    rule("postman_api_key", r"\bPMAK-[a-f0-9]{20,}-[a-f0-9]{30,}", "PMAK-"),
    _prefixed("sentry_token", ("sntryu_", "sntrys_"), r"[A-Za-z0-9+/=_-]{40,}"),
    rule(
        "grafana_token",
        r"\bglc_[A-Za-z0-9+/]{32,}={0,2}|\bglsa_[A-Za-z0-9]{32}_[a-f0-9]{8}",
        "glc_",
        "glsa_",
    ),
    _prefixed("new_relic_key", ("NRAK-", "NRAA-", "NRII-", "NRJS-"), r"[A-Za-z0-9]{19,}"),
    rule("alibaba_access_key_id", r"\bLTAI[A-Za-z0-9]{12,20}\b", "LTAI"),
    rule("doppler_token", r"\bdp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,}", "dp."),
    rule("dynatrace_token", r"\bdt0c01\.[A-Z0-9]{24}\.[A-Za-z0-9]{64}", "dt0c01."),
    _prefixed("heroku_api_key", ("HRKU-",), r"[A-Za-z0-9_-]{30,}"),
    _prefixed(
        "planetscale_token", ("pscale_tkn_", "pscale_pw_", "pscale_oauth_"), r"[A-Za-z0-9=._-]{32,}"
    ),
    _prefixed("pulumi_token", ("pul-",), r"[a-f0-9]{40}\b"),
    _prefixed("shippo_token", ("shippo_live_", "shippo_test_"), r"[a-f0-9]{40}\b"),
    _prefixed("sourcegraph_token", ("sgp_",), r"(?:[a-f0-9]{16}_)?[a-f0-9]{40}\b"),
    _prefixed("supabase_token", ("sbp_",), r"[a-f0-9]{40}\b"),
    _prefixed("supabase_token", ("sb_secret_",), r"[A-Za-z0-9_-]{20,}"),
    rule("tailscale_key", r"\btskey-[a-z]+-[A-Za-z0-9]{8,}-[A-Za-z0-9]{16,}", "tskey-"),
    _prefixed("contentful_token", ("CFPAT-",), r"[A-Za-z0-9_-]{43}"),
    rule("dropbox_token", r"\bsl\.(?:u\.)?[A-Za-z0-9_-]{130,}", "sl."),
    _prefixed("figma_token", ("figd_",), r"[A-Za-z0-9_-]{40,}"),
    rule("airtable_token", r"\bpat[A-Za-z0-9]{14}\.[a-f0-9]{64}\b", "pat"),
    _prefixed("adafruit_io_key", ("aio_",), r"[A-Za-z0-9]{28}\b"),
    rule("easypost_api_key", r"\bEZ[AT]K[A-Za-z0-9]{54}\b", "EZAK", "EZTK"),
    rule("flutterwave_key", r"\bFLWSECK(?:_TEST)?-[a-h0-9]{32}-X\b", "FLWSECK"),
    rule("harness_token", r"\bpat\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{20}", "pat."),
    rule(
        "jfrog_token",
        r"\bAKCp[A-Za-z0-9]{60,}|\bcmVmdGtuOjAxOj[A-Za-z0-9]{40,}",
        "AKCp",
        "cmVmdGtuOjAxOj",
    ),
    rule("mapbox_token", r"\bsk\.eyJ[A-Za-z0-9_-]{40,}\.[A-Za-z0-9_-]{20,}", "sk.eyJ"),
    rule("octopus_deploy_api_key", r"\bAPI-[A-Z0-9]{26}\b", "API-"),
    _prefixed("prefect_api_key", ("pnu_",), r"[A-Za-z0-9]{36}\b"),
    _prefixed("readme_api_key", ("rdme_",), r"[a-z0-9]{70}\b"),
    rule("onepassword_token", r"\bops_eyJ[A-Za-z0-9+/=_-]{100,}", "ops_eyJ"),
    rule(
        "onepassword_secret_key",
        r"\bA3-[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})-[A-Z0-9]{5}-[A-Z0-9]{5}"
        r"-[A-Z0-9]{5}\b",
        "A3-",
    ),
    rule(
        "flyio_token",
        r"\bFlyV1 fm[12]_[A-Za-z0-9+/=,_-]{50,}|\bfo1_[A-Za-z0-9_-]{40,}",
        "FlyV1 fm",
        "fo1_",
    ),
    rule("cloudflare_origin_ca_key", r"\bv1\.0-[a-f0-9]{24}-[a-f0-9]{100,}", "v1.0-"),
    _prefixed("render_api_key", ("rnd_",), r"[A-Za-z0-9]{32}\b"),
    _prefixed("netlify_token", ("nfp_",), r"[A-Za-z0-9]{36}\b"),
    _prefixed("sonarqube_token", ("squ_", "sqp_", "sqa_"), r"[a-f0-9]{40}\b"),
    _prefixed("buildkite_token", ("bkua_",), r"[a-f0-9]{40}\b"),
    _prefixed("circleci_token", ("CCIPAT_",), r"[A-Za-z0-9]{20,}_[a-f0-9]{40}\b"),
    _prefixed("scalingo_token", ("tk-us-",), r"[A-Za-z0-9_-]{48}\b"),
    _prefixed("infracost_api_key", ("ico-",), r"[A-Za-z0-9]{32}\b"),
    _prefixed("frameio_token", ("fio-u-",), r"[A-Za-z0-9_=-]{64}"),
    rule(
        "plaid_access_token",
        r"\baccess-(?:sandbox|development|production)-[a-f0-9-]{36}\b",
        "access-sandbox-",
        "access-development-",
        "access-production-",
    ),
    rule(
        "paypal_braintree_token",
        r"\baccess_token\$(?:production|sandbox)\$[a-z0-9]{16}\$[a-f0-9]{32}\b",
        "access_token$",
    ),
)
