"""Texts the secret filter must leave alone, grouped by the rules they resemble.

Each group holds what a transcript is full of and a rule could mistake for a credential:
code that *names* a secret without holding one, command lines whose options look like the
password options, URLs with ports and e-mail addresses, ids and hashes, base64 that is not a
key. With the real fixture transcripts (``tests/fixtures/runtimes``), they are the negative
corpus: zero findings is the requirement, per group.
"""

from __future__ import annotations

import base64

__all__ = ["NEGATIVES"]

_CERT = base64.b64encode(
    b"-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUQ0FBQ0FBQ0FBQ0FBQ0FBQ0FBQ0E=\n"
    b"-----END CERTIFICATE-----\n"
).decode()

NEGATIVES: dict[str, tuple[str, ...]] = {
    "code_naming_a_secret": (
        'password = getpass.getpass("Password: ")',
        'api_key = os.environ["OPENAI_API_KEY"]',
        'client = OpenAI(api_key=os.environ.get("OPENAI_API_KEY"))',
        "token = get_token(scope)",
        "password = self.password",
        "secret = settings.SECRET_KEY",
        "password: Optional[str] = None",
        "const token = await getToken();",
        "api_key: string;",
        "export API_KEY=$API_KEY",
        "TOKEN_LIMIT=4096",
        'headers = {"Authorization": f"Bearer {token}"}',
        "if not password: raise ValueError('password required')",
        "token_count = len(tokens)",
        "env = dict(ANTHROPIC_AUTH_TOKEN=MODEL_API_KEY, BASE_URL=url)",
        # Shell parameter expansion: the word after ``:?`` is the error message.
        ': "${API_KEY:?missing}"',
        'TOKEN="${GITHUB_TOKEN:?GITHUB_TOKEN is not set}"',
        'curl -H "x-api-key: ${API_KEY:?missing}" https://api.example.com/v1',
        '{"config":"{\\"password\\":\\"\\",\\"password_min_length\\":12}"}',
    ),
    "command_lines": (
        "mysql -u root -p app",
        "mysql -h db -P 3306 -u root -p",
        "ssh -p 2222 login@bastion.example.com",
        "mkdir -p build/out && cd build",
        "git push -u origin main",
        "docker run -u 1000:1000 --rm img",
        "sort -u names.txt | wc -l",
        "docker login -u bob --password-stdin registry.example.com",
        'curl -u "$USER:$PASS" https://ci.example.com/api',
        "curl -u bob https://ci.example.com/api",
        "sshpass -f ~/.ssh/pw ssh host uptime",
        'redis-cli -a "$REDIS_PASSWORD" ping',
        "zip -r out.zip dist/",
        "az login --use-device-code",
        "keytool -list -keystore app.jks -storepass:env STOREPASS",
        "htpasswd -c /etc/nginx/.htpasswd alice",
        "pip install --user requests",
        "tool --password-file /run/secrets/db --token-ttl 3600",
        "openssl rsa -in key.pem -passin env:KEY_PASS -out plain.pem",
        "docker login -p is insecure, use --password-stdin",
        "ARG NPM_TOKEN\nENV TOKEN_FILE=/run/secrets/token\nENV PASSWORD_MIN_LENGTH 12",
        "ENV API_TOKEN $API_TOKEN\nENV GITHUB_TOKEN ${GITHUB_TOKEN}",
        "aws configure set region eu-west-1\naws configure get aws_secret_access_key",
        "docker run --rm \\\n  -e PASSWORD_FILE=/run/secrets/db \\\n  -v pg:/data \\\n  pg:16",
    ),
    "urls": (
        "https://host.example.com:8443/path?email=jane@example.com",
        "see https://example.com:8443/path?q=1 and ssh://git@host:22/x",
        "git@github.com:acme/app.git",
        "http://localhost:8000/api/v1/items",
        "mailto:jane@example.com",
        "https://jane@git.example.com/acme/app.git",
        "postgres://db.internal:5432/app",
        "https://example.com/a:b@c",
        "https://x.example/cb?page=2&next=abc",
    ),
    "files": (
        "root:x:0:0:root:/root:/bin/bash",
        "2026-11-30 10:11:12:INFO:worker:started",
        "localhost:5432:app:deploy:*",
        "fe80::1:2:3:4 dev eth0",
        "The machine learning model needs a password reset flow.",
        "machine api.example.com login bob password $NETRC_PASSWORD",
        "Private-Lines: none in this document",
        'if line.strip() == "-----END RSA PRIVATE KEY-----":',
        "```\n...\n-----END OPENSSH PRIVATE KEY-----\n```",
    ),
    "ids_hashes_and_base64": (
        "commit 3f9c2a6d1e8b7f4a5c0d9e2b1a7c6f5e4d3b2a19",
        "id 01a22af8-b6c1-72c2-a5ed-92afebc8ada1",
        "sha256:" + "ab" * 32,
        f"client-certificate-data: {_CERT}",
        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl me@host",
        base64.b64encode(bytes(96)).decode(),
        "task-0123456789abcdef0123456789abcdef",
        "EAAB is the header of this blob",
        "API-VERSION: 2024-01-01",
        "echo aGVsbG8gd29ybGQK | base64 -d",
        "MIIBszCCAVmgAwIBAgIUQ0FBQ0FBQ0FBQ0FBQ0FBQ0FBQ0E=\n-----END CERTIFICATE-----",
    ),
    "prose": (
        "The password must be at least 8 characters long.",
        "Set the token in your environment, then run the script.",
        "Authorization: Bearer <token>",
        "Use `--token` to pass a token, or set GITHUB_TOKEN.",
        "Login with -p to be prompted for the password.",
        "The key is rotated every 90 days; the secret never leaves the vault.",
        '"""One pass: queued executions, running ones, then the rest."""',
        "# sent as Authorization: Bearer\nCLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 claude",
        "The API key is stored in the vault; the token is valid for 3600 seconds.",
        "The secret key is rotated every 90 days, the password is checked at 2024-01-01T00:00",
        "Your api key is shown once at https://console.example.com/keys/abc123def456",
        "The token: it is in the keychain. The access token is a JWT signed with RS256.",
    ),
}
