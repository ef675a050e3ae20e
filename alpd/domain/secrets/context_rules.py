"""Context rules of the secret filter: a credential recognised by what surrounds it.

Vendor tokens carry their own prefix (``alpd.domain.secrets.rules``); these do not, so each
rule here is anchored at the syntax that carries them:

* **key blocks**: PEM/PGP/SSH2 private keys (to their END line or, cut short, the 8 KiB after
  BEGIN; a block whose BEGIN line is gone is found from its END line by the engine,
  ``alpd.domain.secrets.filter``), base64-wrapped PEM keys (a kubeconfig's
  ``client-key-data``: decoded far enough to tell a key from a certificate), PuTTY ``.ppk``
  private lines;
* **URLs**: ``scheme://user:password@host`` (a password may hold ``/`` and ``@``: it runs to
  the last ``@`` before the host), signed-URL and token query parameters;
* **headers**: ``Authorization: Bearer …``, ``PRIVATE-TOKEN:``, ``x-<vendor>-access-token:``;
* **command lines**: ``mysql -pPW``, ``sshpass -p PW``, ``curl -u user:PW``,
  ``docker login -p PW``, ``keytool -storepass PW``, ``redis-cli -a PW`` and their kin;
* **files**: ``.netrc``/``.authinfo`` (``machine … password PW``), ``.pgpass``
  (``host:port:db:user:PW``).

Secret-named assignments (``API_KEY=…``, ``--password PW``) are not rules: the engine finds
them from the stems of such names (``alpd.domain.secrets.filter``).
"""

from __future__ import annotations

import binascii
import re

from alpd.domain.secrets.rules import Rule, rule

__all__ = ["CONTEXT_RULES", "PRIVATE_KEY_END", "command_value"]

# One argument on a command line: quoted (to its closing quote) or bare (to whitespace or a
# shell operator). The secret is whichever group matched.
_ARG = r"""(?:"(?P<s>[^"\n]{1,512})"|'(?P<s2>[^'\n]{1,512})'|(?P<s3>[^\s"'`;|&<>]{1,512}))"""
# The rest of a command before the option that carries the secret: bounded, on one line.
_OPTIONS = r"[^\n;|&]{0,256}?[ \t]"
_PLACEHOLDERS = frozenset({"password", "passwd", "pass", "secret", "token", "xxx", "***"})


def command_value(value: str) -> bool:
    """Whether a value given to a password option is a password (not a reference to one)."""
    if len(value) < 3 or value.startswith(("$", "%", "{", "<", "[REDACTED:")):
        return False
    if value.lower() in _PLACEHOLDERS or set(value) <= {"*", "x", "X", "."}:
        return False
    # A short number is a port or a count (`ssh login@host -p 2222`), not a password.
    return not (value.isdigit() and len(value) <= 5)


def _is_private_key_base64(value: str) -> bool:
    """A base64 PEM block (``LS0tLS1CRUdJTi…`` is ``-----BEGIN``) is a key, not a certificate."""
    head = value[: len(value[:96]) // 4 * 4]
    try:
        return b"PRIVATE KEY" in binascii.a2b_base64(head)
    except binascii.Error:
        return False


def _command(kind: str, commands: tuple[str, ...], option: str, **extra: object) -> Rule:
    """``COMMAND … OPTION SECRET`` on one line, found from the command's name."""
    names = "|".join(re.escape(c) for c in sorted(commands, key=len, reverse=True))
    return rule(
        kind,
        rf"(?<![\w-])(?:{names})(?![\w-]){_OPTIONS}{option}{_ARG}",
        *commands,
        check=command_value,
        **extra,  # type: ignore[arg-type]
    )


# A private key block's END line (PEM, PGP, SSH2); ``alpd.domain.secrets.filter`` also reads
# the base64 lines above one that has lost its BEGIN line (``tail -n 6 key.pem``).
PRIVATE_KEY_END = r"-{4,5} ?END[ A-Z0-9_-]{0,40}PRIVATE KEY(?: BLOCK)? ?-{4,5}"

# What follows the ``@`` of a URL's credentials: a host that cannot be part of a password.
_HOST_END = r"(?:[:/?#\s\"'<>;,)\]]|$)"
_HOST = (
    r"(?:(?:[A-Za-z0-9-]{1,63}\.){1,10}[A-Za-z0-9-]{1,63}|[A-Za-z0-9.-]{1,253}:\d{1,5}"
    r"|localhost|\[[0-9A-Fa-f:.]{2,45}\])" + _HOST_END
)

# Names that carry a secret in a URL query (``?sig=…``, ``&access_token=…``).
_QUERY_NAMES = (
    "sig",
    "signature",
    "access_token",
    "token",
    "api_key",
    "apikey",
    "key",
    "secret",
    "password",
    "auth",
)

CONTEXT_RULES: tuple[Rule, ...] = (
    rule(
        "private_key",
        # To the END line if it comes within 64 KiB; without one (a truncated tail), the next
        # 8 KiB, which hold the body of any RSA key up to 4096 bits. SSH2 (RFC 4716) blocks
        # use four dashes and spaces.
        r"-{4,5} ?BEGIN[ A-Z0-9_-]{0,40}PRIVATE KEY(?: BLOCK)? ?-{4,5}",
        "-----BEGIN",
        "---- BEGIN",
        closing=PRIVATE_KEY_END,
        reach=65536,
        fallback=8192,
    ),
    rule(
        "private_key",
        r"LS0tLS1CRUdJT[A-Za-z0-9+/]{20,}={0,2}",
        "LS0tLS1CRUdJT",
        check=_is_private_key_base64,
    ),
    rule(
        "private_key",
        r"Private-Lines: *\d+\r?\n(?P<s>(?:[A-Za-z0-9+/=]{1,128}\r?\n?){1,128})",
        "Private-Lines:",
    ),
    rule(
        "url_password",
        # A password may hold ``/``, ``@``, ``?`` and ``#`` (pasted unencoded): it runs to the
        # first ``@`` a real host follows (dotted, with a port, ``localhost`` or an IPv6
        # literal), else to the last ``@`` of the URL. ``host:8443/…`` is a port.
        r"://[^\s:@/\"'<>]{0,256}:(?!\d{1,5}(?:[/?#\s\"'<>]|$))(?:"
        r"(?P<s>[^\s\"'<>]{1,256}?)@(?=" + _HOST + r")"
        r"|(?P<s2>[^\s\"'<>]{1,256})@(?=[A-Za-z0-9._-]{1,253}" + _HOST_END + r"))",
        "://",
    ),
    rule(
        "url_query_secret",
        r"[?&](?:sig|signature|access_token|token|api_?key|key|secret|password|auth)"
        r"=(?P<s>[^&\s#\"'<>]{8,})",
        *(f"{lead}{name}=" for name in _QUERY_NAMES for lead in "?&"),
        folded=True,
    ),
    rule(
        "authorization_header",
        # Tried where ``authorization`` starts: a ``proxy-`` before it changes nothing in
        # the secret's span.
        r"\b(?:proxy-)?authorization\s*[:=]\s*[\"']?(?:bearer|basic|token|bot|digest)[ \t]+"
        r"(?P<s>[a-z0-9._~+/=-]{8,})",
        "authorization",
        folded=True,
    ),
    rule(
        "token_header",
        r"\b(?:private-token|x-api-key|x-auth-token|api-key)\s*:\s*(?P<s>[^\s\"']{8,})",
        "private-token",
        "api-key",
        "x-auth-token",
        folded=True,
        check=command_value,  # not ``x-api-key: ${API_KEY:?missing}``
    ),
    rule(
        "token_header",
        # ``x-<vendor>-access-token``: the vendor name, up to 32 letters, precedes the trigger.
        r"\bx-[a-z]{1,32}-access-token\s*:\s*(?P<s>[^\s\"']{8,})",
        "-access-token",
        starts=range(len("x-a"), len("x-") + 33),
        folded=True,
        check=command_value,
    ),
    # The password glued to ``-p`` (``-p PW`` would be a prompt, then a database name).
    _command(
        "command_password",
        (
            "mysql",
            "mysqldump",
            "mysqladmin",
            "mysqlimport",
            "mysqlsh",
            "mariadb",
            "mariadb-dump",
            "mariadb-admin",
        ),
        "(?:-p|--password=)(?=[^\\s])",
    ),
    _command("command_password", ("sshpass",), r"-p[ \t]*"),
    _command("command_password", ("redis-cli",), r"(?:-a|--pass)[ \t]+"),
    _command("command_password", ("sqlcmd", "bcp"), r"-P[ \t]*"),
    _command(
        "command_password",
        ("ldapsearch", "ldapadd", "ldapmodify", "ldapdelete", "ldapwhoami", "ldappasswd"),
        r"-w[ \t]*",
    ),
    _command("command_password", ("zip", "unzip", "7z", "7za"), r"(?:-P[ \t]*|-p)"),
    _command(
        "command_password",
        ("mongo", "mongosh", "mongodump", "mongorestore", "mongoexport", "mongoimport"),
        r"(?:-p|--password)[ \t]+",
    ),
    _command("command_password", ("xfreerdp", "wlfreerdp"), r"/p:"),
    # ``docker login``, ``podman login``, ``helm registry login``, ``az login``, ``oc login``…
    _command("command_password", ("login",), r"(?:-p|--password)(?:[ \t]+|=)"),
    _command("command_password", ("keytool",), r"-(?:src|dest|new)?(?:store|key)pass[ \t]+"),
    _command(
        "command_password", ("htpasswd",), r"-[a-zA-Z]*b[a-zA-Z]*[ \t]+[^\s]+[ \t]+[^\s]+[ \t]+"
    ),
    rule(
        "command_password",
        r"(?<![\w-])(?:curl)(?![\w-])" + _OPTIONS + r"(?:-u|-U|--user|--proxy-user)[ \t=]*"
        r"""['"]?[^\s:'"]{0,128}:(?P<s>[^\s'"]{1,256})""",
        "curl",
        check=command_value,
    ),
    rule(
        "command_password",
        r"(?<![\w-])(?:smbclient|rpcclient|smbmap|smbget)(?![\w-])"
        + _OPTIONS
        + r"""(?:-U|--user)[ \t=]*['"]?[^\s%'"]{1,128}%(?P<s>[^\s'"]{1,256})""",
        "smbclient",
        "rpcclient",
        "smbmap",
        "smbget",
        check=command_value,
    ),
    rule(
        "command_password",
        r"\bsqlplus(?:[ \t]+-[A-Za-z]+)*[ \t]+[^\s/@]{1,128}/(?P<s>[^\s@]{1,256})@",
        "sqlplus",
        check=command_value,
    ),
    rule(
        "netrc_password",
        # A login (or account) between, as every real entry has: prose about a machine
        # learning password reset is not a netrc line.
        r"\bmachine[ \t]+\S+(?:\s+(?:login|account|port)\s+\S+){1,3}\s+password\s+" + _ARG,
        "machine",
        check=command_value,
    ),
    rule(
        "pgpass_password",
        # ``hostname:port:database:username:password``, a whole line.
        r"[^:\s#]{1,253}:(?:\d{1,5}|\*):[^:\s]{1,63}:[^:\s]{1,63}:(?P<s>\S{1,256})[ \t]*(?!.)",
        ":5432:",
        ":5433:",
        ":6432:",
        ":*:",
        at_line_start=True,
        check=command_value,
    ),
)
