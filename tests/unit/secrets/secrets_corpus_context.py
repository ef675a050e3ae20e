"""Context credentials of the secret-filter corpus: no prefix, only the syntax around them.

Command lines (``mysql -pPW``, ``curl -u user:PW``), files (``.netrc``, ``.pgpass``, a
kubeconfig, a PuTTY key, a Docker config), URLs whose password holds ``/`` or ``@``, and key
blocks too long for an output tail. Every value is random.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable

from secrets_gen import ALNUM, DIGITS, HEX, URLSAFE, Gen, pem

__all__ = ["CONTEXT_KINDS"]

Make = Callable[[Gen], tuple[str, tuple[str, ...]]]


def _command(line: str) -> Make:
    """A command line after a prompt (``{p}`` is the password, ``{u}`` a user name)."""

    def sample(g: Gen) -> tuple[str, tuple[str, ...]]:
        password = g.password()
        return "$ " + line.format(p=password, u=g.word()), (password,)

    return sample


def _rsa_4096(g: Gen) -> tuple[str, tuple[str, ...]]:
    key, _ = pem(g, "RSA PRIVATE KEY", 2350)
    rows = key.splitlines()
    return f"$ cat ~/.ssh/id_rsa\n{key}\n$ ", (rows[1], rows[len(rows) // 2], rows[-2])


def _pgp_block_long(g: Gen) -> tuple[str, tuple[str, ...]]:
    body = g.b64(2600)
    lines = "\n".join(body[i : i + 64] for i in range(0, len(body), 64))
    block = (
        "$ gpg --export-secret-keys --armor me@example.com\n"
        "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n"
        f"{lines}\n={g.s(ALNUM, 4)}\n-----END PGP PRIVATE KEY BLOCK-----\n"
    )
    rows = lines.splitlines()
    return block, (rows[0], rows[len(rows) // 2], rows[-2])


def _ssh2_key(g: Gen) -> tuple[str, tuple[str, ...]]:
    body = g.b64(900)
    lines = "\n".join(body[i : i + 70] for i in range(0, len(body), 70))
    block = (
        "---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----\n"
        f'Comment: "2048-bit rsa"\n{lines}\n---- END SSH2 ENCRYPTED PRIVATE KEY ----'
    )
    return block, (body[:64], body[-40:])


def _putty_ppk(g: Gen) -> tuple[str, tuple[str, ...]]:
    public = g.b64(51)
    private = g.b64(48)
    text = (
        "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: deploy\n"
        f"Public-Lines: 2\n{public[:64]}\n{public[64:]}\nPrivate-Lines: 1\n{private}\n"
        f"Private-MAC: {g.s(HEX, 64)}\n"
    )
    return text, (private,)


def _kubeconfig(g: Gen) -> tuple[str, tuple[str, ...]]:
    cert, _ = pem(g, "CERTIFICATE", 600)
    key, _ = pem(g, "RSA PRIVATE KEY", 1190)
    key_data = base64.b64encode(key.encode()).decode()
    text = (
        "users:\n- name: admin\n  user:\n"
        f"    client-certificate-data: {base64.b64encode(cert.encode()).decode()}\n"
        f"    client-key-data: {key_data}\n"
    )
    return text, (key_data[:80], key_data[-60:])


def _docker_config(g: Gen) -> tuple[str, tuple[str, ...]]:
    auth = base64.b64encode(f"{g.word()}:{g.password()}".encode()).decode()
    doc = {"auths": {"registry.example.com": {"auth": auth}}}
    return json.dumps(doc, indent=2), (auth,)


def _url_slash(g: Gen) -> tuple[str, tuple[str, ...]]:
    password = g.s(ALNUM, 6) + "/" + g.s(ALNUM, 6)
    return f"DATABASE_URL=postgres://{g.word()}:{password}@db.internal:5432/app", (password,)


def _url_at(g: Gen) -> tuple[str, tuple[str, ...]]:
    password = g.s(ALNUM, 5) + "@" + g.s(ALNUM, 7)
    return f"git clone https://{g.word()}:{password}@git.example.com/acme/app.git", (password,)


def _url_at_and_slash_short_host(g: Gen) -> tuple[str, tuple[str, ...]]:
    password = g.s(ALNUM, 4) + "@" + g.s(ALNUM, 3) + "/" + g.s(ALNUM, 5)
    return f"redis-cli -u redis://:{password}@cache/0 ping", (password,)


def _netrc(g: Gen) -> tuple[str, tuple[str, ...]]:
    password = g.password()
    return (
        f"$ cat ~/.netrc\nmachine api.example.com\n  login {g.word()}\n  password {password}\n",
        (password,),
    )


def _pgpass(g: Gen) -> tuple[str, tuple[str, ...]]:
    password = g.password()
    other = g.s(ALNUM, 16)
    text = f"$ cat ~/.pgpass\ndb.internal:5432:app:{g.word()}:{password}\n*:*:*:replica:{other}"
    return text, (password, other)


def _aws_session_token(g: Gen) -> tuple[str, tuple[str, ...]]:
    token = "FwoGZXIvYXdzE" + g.s(ALNUM + "+/", 300)
    return f"[default]\naws_session_token = {token}\n", (token,)


def _npmrc_auth(g: Gen) -> tuple[str, tuple[str, ...]]:
    token = f"{g.s(HEX, 8)}-{g.s(HEX, 4)}-{g.s(HEX, 4)}-{g.s(HEX, 4)}-{g.s(HEX, 12)}"
    return f"//npm.internal.example/:_authToken={token}\nalways-auth=true", (token,)


def _openssl_passin(g: Gen) -> tuple[str, tuple[str, ...]]:
    password = g.password()
    return f"openssl rsa -in key.pem -passin pass:{password} -out plain.pem", (password,)


def _sqlplus(g: Gen) -> tuple[str, tuple[str, ...]]:
    password = g.s(ALNUM, 12)
    return f"$ sqlplus -S scott/{password}@//db.internal:1521/ORCL @report.sql", (password,)


def _pip_conf(g: Gen) -> tuple[str, tuple[str, ...]]:
    password = g.s(URLSAFE, 24)
    return f"[global]\nindex-url = https://{g.word()}:{password}@pypi.example.com/simple\n", (
        password,
    )


def _export(g: Gen) -> tuple[str, tuple[str, ...]]:
    token = g.s(ALNUM, 8) + g.s(DIGITS, 4)
    return f"export GITHUB_TOKEN={token} && gh repo list", (token,)


def _base64_inner(payload: bytes, lead: int, size: int) -> str:
    """The base64 characters of ``payload`` that encode only its bytes ``lead:lead + size``."""
    encoded = base64.b64encode(payload).decode()
    return encoded[-(-lead // 3) * 4 : (lead + size) // 3 * 4]


def _base64_github_token(g: Gen) -> tuple[str, tuple[str, ...]]:
    # What precedes the token in the payload sets its offset in a 3-byte group (0, 1 or 2).
    token = "ghp_" + g.s(ALNUM, 36)
    lead = g.rng.choice(["", f"{g.word()}:", "x-access-token:", "\n"])
    payload = f"{lead}{token}\n".encode()
    encoded = base64.b64encode(payload).decode()
    text = f"$ echo {encoded} | base64 -d > ~/.config/gh/token"
    return text, (_base64_inner(payload, len(lead), len(token)),)


def _base64_vendor_tokens(g: Gen) -> tuple[str, tuple[str, ...]]:
    gitlab = f"glpat-{g.s(URLSAFE, 20)}".encode()
    openai = ("sk-proj-" + g.s(URLSAFE, 74) + "T3BlbkFJ" + g.s(URLSAFE, 74)).encode()
    slack = f"xoxb-{g.s(DIGITS, 12)}-{g.s(DIGITS, 13)}-{g.s(ALNUM, 24)}".encode()
    text = (
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: ci\ndata:\n"
        f"  gitlab: {base64.b64encode(gitlab).decode()}\n"
        f"  openai: {base64.b64encode(openai).decode()}\n"
        f"  slack: {base64.urlsafe_b64encode(slack).decode()}\n"
    )
    return text, tuple(
        _base64_inner(raw, 0, len(raw)).replace("+", "-").replace("/", "_")
        if raw is slack
        else _base64_inner(raw, 0, len(raw))
        for raw in (gitlab, openai, slack)
    )


_KEY_LABELS = ("PRIVATE KEY", "RSA PRIVATE KEY", "EC PRIVATE KEY", "OPENSSH PRIVATE KEY")


def _private_key_tail(g: Gen) -> tuple[str, tuple[str, ...]]:
    key, _ = pem(g, g.rng.choice(_KEY_LABELS), 1190)
    rows = key.splitlines()[-6:]
    return "$ tail -n 6 key.pem\n" + "\n".join(rows) + "\n$ ", tuple(rows[:-1])


def _private_key_tail_json(g: Gen) -> tuple[str, tuple[str, ...]]:
    # An output tail cut inside a service account's JSON: the key's body, escaped line
    # breaks (``\\n``) and END line, without its BEGIN line.
    block, body = pem(g, "PRIVATE KEY", 1216)
    doc = {"private_key": block + "\n", "client_email": "ci@demo.iam.gserviceaccount.com"}
    text = json.dumps(doc, indent=2)
    cut = text[text.index(body[600:640]) :]
    return f"$ tail -c {len(cut)} sa.json\n{cut}", (body[640:704], body[1024:1088], body[-30:])


def _json_double_escaped(g: Gen) -> tuple[str, tuple[str, ...]]:
    password = g.password()
    key = g.s(ALNUM, 32)
    inner = json.dumps({"db_password": password, "api_key": key}, separators=(",", ":"))
    return json.dumps({"config": inner}, separators=(",", ":")), (password, key)


def _json_triple_escaped(g: Gen) -> tuple[str, tuple[str, ...]]:
    password = g.password()
    inner = json.dumps({"password": password}, separators=(",", ":"))
    middle = json.dumps({"config": inner}, separators=(",", ":"))
    return json.dumps({"tool_input": middle}, separators=(",", ":")), (password,)


def _dockerfile(g: Gen) -> tuple[str, tuple[str, ...]]:
    arg, env, env_eq = g.s(ALNUM, 24), g.s(ALNUM, 32), g.password()
    text = (
        "FROM python:3.12-slim\n"
        f"ARG PIP_INDEX_TOKEN={arg}\n"
        f"ENV API_TOKEN {env}\n"
        f"ENV DB_PASSWORD={env_eq} APP_ENV=prod\n"
        "RUN pip install -r requirements.txt\n"
    )
    return text, (arg, env, env_eq)


def _dockerfile_read(g: Gen) -> tuple[str, tuple[str, ...]]:
    # A Dockerfile as a Read tool shows it: a line number and an arrow before each line.
    token, secret = g.s(ALNUM, 40), g.s(URLSAFE, 30)
    lines = ["FROM node:20", f"ENV NPM_AUTH_TOKEN {token}", f"ENV SESSION_SECRET {secret}"]
    text = "\n".join(f"{n:6}\u2192{line}" for n, line in enumerate(lines, 1))
    return text, (token, secret)


def _aws_configure_set(g: Gen) -> tuple[str, tuple[str, ...]]:
    key_id = "AKIA" + g.s("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16)
    secret = g.s(ALNUM + "+/", 40)
    session = "IQoJb3JpZ2luX2Vj" + g.s(ALNUM + "+/", 120)
    text = (
        f"$ aws configure set aws_access_key_id {key_id}\n"
        f"$ aws configure set aws_secret_access_key {secret}\n"
        f"$ aws configure set aws_session_token {session} --profile ci\n"
    )
    return text, (key_id, secret, session)


def _continued_assignment(g: Gen) -> tuple[str, tuple[str, ...]]:
    first, second = g.s(ALNUM, 12), g.s(ALNUM, 12)
    return f"$ export TOKEN={first}\\\n{second}\n$ ./deploy.sh", (first, second)


def _continued_vendor_token(g: Gen) -> tuple[str, tuple[str, ...]]:
    # The first part alone is a token (ghp_ and 20 characters); the second is found joined.
    token = "ghp_" + g.s(ALNUM, 36)
    text = (
        "$ docker run --rm \\\n"
        f"    -e GH={token[:24]}\\\n"
        f"{token[24:]} \\\n"
        "    ghcr.io/acme/tool:latest"
    )
    return text, (token[:24], token[24:])


def _continued_command(g: Gen) -> tuple[str, tuple[str, ...]]:
    # The command's name and its password option on different lines: one line to the shell.
    password, other = g.password(), g.password()
    text = (
        f"$ mysql -h db.internal \\\n    -u {g.word()} -p'{password}' app < dump.sql\n"
        f"$ docker login \\\n    -u {g.word()} \\\n    -p {other} \\\n    registry.example.com"
    )
    return text, (password, other)


def _prose_secrets(g: Gen) -> tuple[str, tuple[str, ...]]:
    key = g.s(ALNUM, 20) + g.s(DIGITS, 2) + g.s(ALNUM, 2)
    password = g.password()
    token = g.s(HEX, 40)
    text = (
        f"The staging api key is {key}.\n"
        f"For prod the admin password is {password} until Friday.\n"
        f"Here is my deploy token: `{token}`, it expires tomorrow."
    )
    return text, (key, password, token)


CONTEXT_KINDS: dict[str, Make] = {
    "rsa_4096_private_key": _rsa_4096,
    "pgp_private_key_long": _pgp_block_long,
    "ssh2_private_key": _ssh2_key,
    "putty_private_key": _putty_ppk,
    "kubeconfig_client_key_data": _kubeconfig,
    "docker_config_auth": _docker_config,
    "url_password_with_slash": _url_slash,
    "url_password_with_at": _url_at,
    "url_password_with_at_and_slash": _url_at_and_slash_short_host,
    "netrc_password": _netrc,
    "pgpass_password": _pgpass,
    "aws_session_token": _aws_session_token,
    "npmrc_auth_token": _npmrc_auth,
    "openssl_passin": _openssl_passin,
    "sqlplus_password": _sqlplus,
    "mysql_p_glued": _command("mysql -h db.internal -u {u} -p{p} app -e 'select 1'"),
    "mysqldump_password": _command("mysqldump -u{u} -p'{p}' --all-databases > all.sql"),
    "sshpass_password": _command("sshpass -p '{p}' ssh {u}@bastion.example.com uptime"),
    "curl_user_password": _command("curl -fsS -u {u}:{p} https://ci.example.com/api/json"),
    "docker_login_password": _command("docker login -u {u} -p {p} registry.example.com"),
    "podman_login_password": _command("podman login --username {u} --password={p} quay.io"),
    "cli_password_option": _command("./manage.py createsuperuser --username {u} --password {p}"),
    "keytool_storepass": _command("keytool -list -keystore app.jks -storepass {p}"),
    "redis_cli_password": _command("redis-cli -h cache.internal -a '{p}' INFO"),
    "sqlcmd_password": _command("sqlcmd -S db.internal -U {u} -P {p} -Q 'SELECT 1'"),
    "ldapsearch_password": _command(
        'ldapsearch -x -D "cn={u},dc=example,dc=com" -w {p} -b dc=example,dc=com'
    ),
    "smbclient_password": _command("smbclient //fs.example.com/share -U {u}%{p}"),
    "htpasswd_password": _command("htpasswd -bc /etc/nginx/.htpasswd {u} {p}"),
    "zip_password": _command("zip -P {p} -r backup.zip secrets/"),
    "mongosh_password": _command("mongosh --host db.internal -u {u} -p {p} --quiet"),
    "xfreerdp_password": _command("xfreerdp /v:win.example.com /u:{u} /p:{p} /cert:ignore"),
    "az_login_password": _command("az login --service-principal -u {u} -p {p} --tenant t1"),
    "sshpass_glued": _command("sshpass -p{p} scp backup.tar {u}@nas.example.com:/backups/"),
    "url_password_in_pip_conf": _pip_conf,
    "env_var_token_in_shell": _export,
    "base64_wrapped_github_token": _base64_github_token,
    "base64_wrapped_vendor_tokens": _base64_vendor_tokens,
    "private_key_tail_without_begin": _private_key_tail,
    "private_key_tail_in_json": _private_key_tail_json,
    "json_double_escaped_secrets": _json_double_escaped,
    "json_triple_escaped_password": _json_triple_escaped,
    "dockerfile_env_and_arg": _dockerfile,
    "dockerfile_env_in_read_output": _dockerfile_read,
    "aws_configure_set": _aws_configure_set,
    "assignment_split_by_continuation": _continued_assignment,
    "token_split_by_continuation": _continued_vendor_token,
    "command_split_by_continuation": _continued_command,
    "secrets_named_in_prose": _prose_secrets,
}
