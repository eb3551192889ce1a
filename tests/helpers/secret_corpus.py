"""Realistic FAKE credentials for the redaction tests, and where each one is planted.

None of these is real. They are assembled at run time from a seeded generator and split
prefixes, so the source itself holds no credential-shaped string (push protection and
secret scanners have nothing to flag here), yet each value has the exact shape of its
family: the recorder must recognise them as it would recognise real ones.

``PLACES`` says where each value travels in ``tests/servers/secrets_server.py``'s session,
so a test can check every place the issue lists: tool arguments, echoed results, JSON
inside strings, structured content, stderr, raw stdout lines, the command line, the
environment, the upstream URL and its query string, and HTTP headers.
"""

from __future__ import annotations

import base64
import html
import json
import random
import string
from typing import Final
from urllib.parse import quote, quote_plus

_rng = random.Random(16)
_ALNUM = string.ascii_letters + string.digits
_B64 = _ALNUM + "+/"


def _body(size: int, alphabet: str = _ALNUM) -> str:
    return "".join(_rng.choice(alphabet) for _ in range(size))


def _pem() -> str:
    lines = [_body(64, _B64) for _ in range(6)]
    kind = " ".join(("BEGIN", "PRIVATE", "KEY"))
    end = " ".join(("END", "PRIVATE", "KEY"))
    return f"-----{kind}-----\n" + "\n".join(lines) + f"\n-----{end}-----"


def _jwt() -> str:
    head = base64.urlsafe_b64encode(b'{"alg":"HS256","typ":"JWT"}').rstrip(b"=").decode()
    body = base64.urlsafe_b64encode(b'{"sub":"fake-user-1","iat":1700000000}')
    return ".".join((head, body.rstrip(b"=").decode(), _body(43, _ALNUM + "-_")))


#: name -> the fake secret (a string; numbers are planted as numbers where noted).
CORPUS: Final[dict[str, str]] = {
    "github_classic": "gh" + "p_" + _body(36),
    "github_oauth": "gh" + "o_" + _body(36),
    "github_fine_grained": "github" + "_pat_" + _body(22) + "_" + _body(59),
    "gitlab": "gl" + "pat-" + _body(20),
    "stripe_live": "sk" + "_live_" + _body(24),
    "stripe_restricted": "rk" + "_live_" + _body(24),
    "openai": "sk-" + "proj-" + _body(48),
    "anthropic": "sk-" + "ant-api03-" + _body(86) + "AA",
    "slack_bot": "xo" + "xb-" + _body(11, string.digits) + "-" + _body(24),
    "slack_webhook": "hooks.slack.com/services/" + "T" + _body(10) + "/B" + _body(10),
    "aws_access_key_id": "AK" + "IA" + _body(16, string.ascii_uppercase + string.digits),
    "aws_secret_access_key": _body(40, _B64),
    "google_api": "AI" + "za" + _body(35, _ALNUM + "-_"),
    "npm": "np" + "m_" + _body(36),
    "huggingface": "h" + "f_" + _body(34, string.ascii_letters),
    "sendgrid": "S" + "G." + _body(22, _ALNUM + "-_") + "." + _body(43, _ALNUM + "-_"),
    "azure_account_key": _body(86, _B64) + "==",
    "pem_private_key": _pem(),
    "jwt": _jwt(),
    "basic_password": "Basic-" + _body(12),
    "bearer_opaque": _body(40),
    "x_api_key": _body(32),
    "cookie_session": _body(32),
    "dictionary_password": "sunshine",
    "pin": "4821",
    "otp": "739214",
    "redis_password": _body(16),
    "postgres_password": "p@ss" + _body(10),
    "url_token_user": _body(28),
    "query_token": _body(24),
    "query_api_key": _body(24),
    "free_text_secret": _body(20),
    "stderr_password": _body(14) + "!9",
    "cli_secret_key": _body(30),
    "cli_passphrase": "correct-" + _body(12),
    "cli_api_key": _body(26),
    "env_db_pass": "Tr0ub4dor&" + _body(6),
    "env_service_token": _body(30),
    "json_auth": _body(18),
    "json_pass": _body(15),
    "json_pwd": _body(13),
    "listed_credential_a": _body(20),
    "listed_credential_b": _body(21),
    "nested_secret": _body(22),
    "pypi": "pypi-" + "AgEIcHlwaS5vcmc" + _body(60, _ALNUM + "-_"),
    "docker": "dckr" + "_pat_" + _body(27, _ALNUM + "-_"),
    "vault": "hv" + "s." + _body(24),
    "digitalocean": "dop" + "_v1_" + _body(64, "0123456789abcdef"),
    "groq": "gs" + "k_" + _body(52),
    "mailgun": "key" + "-" + _body(32, "0123456789abcdef"),
    "square": "sq0" + "csp-" + _body(43, _ALNUM + "-_"),
    "twilio": "S" + "K" + _body(32, "0123456789abcdef"),
    "alibaba": "LT" + "AI" + _body(20),
    "doppler": "dp.pt." + _body(43),
    # -- forms real tools print (each planted as ``FORMS`` says) -------------------------
    "slack_webhook_long": "hooks.slack.com/services/T"
    + _body(10)
    + "/B"
    + _body(10)
    + "/"
    + _body(24),
    "pem_no_end_line": _body(64, _B64),
    "cookie_second": _body(32),
    "cookie_third": _body(28),
    "netrc_password": "n3tRc-" + _body(14),
    "log_password": "Lg" + _body(12) + "7",
    "escaped_url_password": "Pg" + _body(14),
    "encoded_query_token": _body(26),
    "plural_tokens": _body(30),
    "plural_api_keys": _body(30),
    "plural_secrets": _body(30),
    "plural_passwords": "Pw-" + _body(16),
    "cookie_pair_value": _body(40),
    "session_key": _body(32),
    "mnemonic": " ".join(("abandon", "ability", "able", "about", "above", _body(8).lower())),
    "kube_client_key_data": base64.b64encode(_body(48).encode()).decode(),
    "private_key_pem_field": _body(48),
    "url_password_slash": "pa/" + _body(14),
    "cli_passphrase_spaced": "horse-" + _body(14),
    "echoed": "Ech0/" + _body(12) + "+&" + _body(6),
    # under a property whose schema gives a pattern: its sentinel must match it
    "patterned_key": "ak" + "_" + _body(16, "0123456789abcdef"),
}

# A few derived forms, planted as they would appear.
BASIC_CREDENTIALS: Final = base64.b64encode(
    f"svc-user:{CORPUS['basic_password']}".encode()
).decode()
AZURE_CONNECTION: Final = (
    "DefaultEndpointsProtocol=https;AccountName=fakeacct;"
    f"AccountKey={CORPUS['azure_account_key']};EndpointSuffix=core.windows.net"
)
POSTGRES_URL: Final = f"postgres://admin:{CORPUS['postgres_password']}@db.internal:5432/app"
REDIS_URL: Final = f"redis://:{CORPUS['redis_password']}@cache.internal:6379/0"

#: Where each form is planted: the text of the ``forms`` tool's answer (``forms_text``),
#: its structured content (``forms_structured``), the command line (``ARGUMENTS``), and
#: the known value the client sends as ``password`` echoed back encoded (``echoes``).
FORMS: Final = (
    "slack_webhook_long",
    "pem_no_end_line",
    "cookie_second",
    "cookie_third",
    "netrc_password",
    "log_password",
    "escaped_url_password",
    "encoded_query_token",
    "plural_tokens",
    "plural_api_keys",
    "plural_secrets",
    "plural_passwords",
    "cookie_pair_value",
    "session_key",
    "mnemonic",
    "kube_client_key_data",
    "private_key_pem_field",
    "url_password_slash",
    "cli_passphrase_spaced",
    "echoed",
)


def echoes(value: str) -> dict[str, str]:
    """A known value as a server may echo it back."""
    raw = value.encode()
    return {
        "form": quote_plus(value),
        "html": html.escape(value),
        "json-slashes": json.dumps(value)[1:-1].replace("/", "\\/"),
        "hex": raw.hex(),
        "base64": base64.b64encode(raw).decode(),
        "upper": value.upper(),
    }


def forms_text() -> str:
    """The text forms, as tools print them; the Slack webhook past the long-text limit."""
    c = CORPUS
    inner = f"https://api.example.com/cb?token={c['encoded_query_token']}&x=1"
    pem_head = "-----" + " ".join(("BEGIN", "PRIVATE", "KEY")) + "-----"
    lines = [
        "lorem ipsum " * 400 + f"alerts: https://{c['slack_webhook_long']}",
        f"{pem_head}\n{c['pem_no_end_line']}",
        f"Cookie: theme=dark; session={c['cookie_second']}; csrftoken={c['cookie_third']}",
        f"machine api.example.com login bob password {c['netrc_password']}",
        f"2026-01-01 INFO connecting with password {c['log_password']} now",
        json.dumps({"dsn": f"postgres://admin:{c['escaped_url_password']}@db:5432/app"}).replace(
            "/", "\\/"
        ),
        "https://app.example.com/login?next=" + quote(inner, safe=""),
        f"cache: redis://admin:{c['url_password_slash']}@cache.internal:6379/0",
    ]
    return "\n".join(lines)


def forms_structured() -> dict[str, object]:
    """The structured forms: plural and container names, a cookie jar, a kubeconfig."""
    c = CORPUS
    return {
        "tokens": [c["plural_tokens"]],
        "apiKeys": {"prod": c["plural_api_keys"]},
        "secrets": c["plural_secrets"],
        "passwords": [c["plural_passwords"]],
        "jar": [{"name": "sid", "value": c["cookie_pair_value"], "domain": "example.com"}],
        "sessionKey": c["session_key"],
        "mnemonic": c["mnemonic"],
        "users": [{"name": "ci", "user": {"client-key-data": c["kube_client_key_data"]}}],
        "private_key_pem": c["private_key_pem_field"],
    }


#: Environment variables the server is started with (secret names, as in real life).
ENVIRONMENT: Final = {
    "DB_PASS": CORPUS["env_db_pass"],
    "MY_SERVICE_TOKEN": CORPUS["env_service_token"],
    "AWS_SECRET_ACCESS_KEY": CORPUS["aws_secret_access_key"],
    "STRIPE_API_KEY": CORPUS["stripe_restricted"],
}

#: The server's command-line options (after the script).
ARGUMENTS: Final = (
    "--secret-key",
    CORPUS["cli_secret_key"],
    f"--passphrase={CORPUS['cli_passphrase']}",
    "--api-key",
    CORPUS["cli_api_key"],
    REDIS_URL,
    "--passphrase",
    CORPUS["cli_passphrase_spaced"],
)

#: Where each value travels (documentation for a person reading a failure).
PLACES: Final = {
    "tool arguments": ["dictionary_password", "pin", "otp", "json_auth", "json_pass"],
    "echoed results (JSON inside a string)": ["json_pwd", "listed_credential_a", "nested_secret"],
    "structured content": ["pin", "npm", "slack_webhook"],
    "stderr": ["stderr_password", "free_text_secret", "postgres_password"],
    "raw stdout lines": ["gitlab", "huggingface"],
    "command line": ["cli_secret_key", "cli_passphrase", "cli_api_key", "redis_password"],
    "environment": ["env_db_pass", "env_service_token", "aws_secret_access_key"],
    "upstream URL and query string": ["url_token_user", "query_token", "query_api_key"],
    "HTTP headers": ["bearer_opaque", "x_api_key", "cookie_session"],
}

#: Values planted only over HTTP (headers, the upstream URL) or only over stdio.
HTTP_ONLY: Final = frozenset(
    {"bearer_opaque", "x_api_key", "cookie_session", "url_token_user", "query_token"}
    | {"query_api_key"}
)
STDIO_ONLY: Final = frozenset({"gitlab", "huggingface"})


def fragments(value: str) -> list[str]:
    """A value and the pieces of it that would still identify it (its ends, PEM lines, the
    encoded form it travels in)."""
    out = [value]
    if value == CORPUS["echoed"]:
        out += list(echoes(value).values())
    if value == CORPUS["basic_password"]:
        out.append(BASIC_CREDENTIALS)
    if "\n" in value:
        out += [line for line in value.splitlines() if "-----" not in line]
    elif len(value) >= 20:
        out += [value[:14], value[-14:]]
    return out
