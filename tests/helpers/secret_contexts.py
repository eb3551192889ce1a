"""A FAKE credential in every context of ``cassette.core.redaction.secret_contexts.CONTEXTS``.

Each value is drawn at run time from a seeded generator (the source holds no
credential-shaped string) and planted as a real tool prints it. ``EXAMPLES`` maps each
context to its examples: a text (tool output, a log line), a JSON value (structured
content, ``_meta``, an elicitation answer), lines of a stream (stderr), a command line,
or environment variables. ``VALUES`` is every planted value; ``forms`` writes a value
every way a writer could leak it.
"""

from __future__ import annotations

import base64
import html
import json
import random
import string
from typing import Any, Final, Literal
from urllib.parse import quote, quote_plus

import attrs

_rng = random.Random(41)
_ALNUM = string.ascii_letters + string.digits
_B64 = _ALNUM + "+/"
_HEX = "0123456789abcdef"

Kind = Literal["text", "json", "lines", "argv", "env"]


def _v(size: int = 20, alphabet: str = _ALNUM) -> str:
    """A fresh value that starts with a letter and holds a digit (so no rule takes it for
    a word)."""
    body = "".join(_rng.choice(alphabet) for _ in range(size - 2))
    letters = [c for c in alphabet if c.isalpha()]
    digits = [c for c in alphabet if c.isdigit()]
    return _rng.choice(letters or alphabet) + body + _rng.choice(digits or alphabet)


@attrs.frozen
class Example:
    kind: Kind
    payload: Any  # a str (text), a JSON value, a list of lines, an argv list, an env dict
    secrets: tuple[str, ...]


def _text(payload: str, *secrets: str) -> Example:
    return Example("text", payload, secrets)


def _json(payload: Any, *secrets: str) -> Example:
    return Example("json", payload, secrets)


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def _pem_body() -> list[str]:
    return [_v(64, _B64) for _ in range(5)]


def _jwt(signed: bool) -> str:
    alg = b'{"alg":"HS256","typ":"JWT"}' if signed else b'{"alg":"none","typ":"JWT"}'
    head = base64.urlsafe_b64encode(alg).rstrip(b"=").decode()
    claims = json.dumps({"sub": _v(12), "iat": 1700000000}).encode()
    body = base64.urlsafe_b64encode(claims).rstrip(b"=").decode()
    return f"{head}.{body}." + (_v(43, _ALNUM + "-_") if signed else "")


def _build() -> dict[str, list[Example]]:
    pem_head = "-----" + " ".join(("BEGIN", "PRIVATE", "KEY")) + "-----"
    pem_end = "-----" + " ".join(("END", "PRIVATE", "KEY")) + "-----"
    ssh_head = "-----" + " ".join(("BEGIN", "OPENSSH", "PRIVATE", "KEY")) + "-----"
    ssh_end = "-----" + " ".join(("END", "OPENSSH", "PRIVATE", "KEY")) + "-----"
    ex: dict[str, list[Example]] = {}
    schemes = ("Bot", "ApiKey", "SSWS", "Splunk", "DeepL-Auth-Key", "Zoho-oauthtoken", "Token")
    auth = []
    for scheme in schemes:
        value = _v(30, _ALNUM + "-._")
        auth.append(_text(f"Authorization: {scheme} {value}", value))
    proxy = _v(26)
    auth.append(_text(f"proxy-authorization: ApiKey {proxy}", proxy))
    bare = _v(28)
    auth.append(_text(f'{{"Authorization": "{bare}"}} sent', bare))
    ex["authorization"] = auth
    bearer = _v(40)
    ex["bearer"] = [_text(f"curl -H 'Authorization: Bearer {bearer}' https://api", bearer)]
    user, password = "svc-" + _v(6).lower(), _v(18)
    basic = _b64(f"{user}:{password}")
    ex["basic"] = [
        _text(
            f"Authorization: Basic {basic}\nserver saw {user}:{password}; pw={password}!",
            basic,
            password,
        )
    ]
    response = _v(32, _HEX)
    ex["digest"] = [
        _text(
            f'Authorization: Digest username="bob", realm="api", nonce="{_v(16)}", uri="/", '
            f'response="{response}", qop=auth',
            response,
        )
    ]
    sig, sas = _v(44, _B64), _v(43, _B64)
    ex["signature"] = [
        _text(f"https://acct.blob.core.windows.net/c/f.txt?sv=2022-11-02&sig={quote(sig)}", sig),
        _text(
            "Authorization: SharedAccessSignature sr=https%3A%2F%2Fns.servicebus.windows.net"
            f"&sig={quote(sas, safe='')}&se=1700000000&skn=RootManageSharedAccessKey",
            sas,
        ),
    ]
    pat, sig_member, nested = _v(40), _v(30), _v(24)
    ex["member"] = [
        _json({"action": "accept", "content": {"pat": pat}}, pat),
        _json({"sig": sig_member, "client": {"client_secret": {"v1": nested}}}, sig_member, nested),
    ]
    pair = _v(32)
    ex["pair"] = [_json([{"name": "X-Api-Key", "value": pair}, {"name": "Accept"}], pair)]
    bot, xkey = _v(34), _v(32)
    ex["header-list"] = [
        _json(
            {"_meta": {"headers": [["Authorization", f"Bot {bot}"], ["X-Api-Key", xkey]]}},
            bot,
            xkey,
        )
    ]
    d, p, q = _v(43, _ALNUM + "-_"), _v(43, _ALNUM + "-_"), _v(43, _ALNUM + "-_")
    jwk = {"kty": "RSA", "n": "sXch", "e": "AQAB", "d": d, "p": p, "q": q}
    ec = _v(43, _ALNUM + "-_")
    ex["jwk"] = [
        _json({"keys": [jwk]}, d, p, q),
        _text(json.dumps({"kty": "EC", "crv": "P-256", "x": "f83O", "d": ec}), ec),
    ]
    a1, a2, a3, a4, a5, a6, a7 = (_v(22) for _ in range(7))
    ex["assignment"] = [
        _text(f"password={a1}", a1),
        _text(f"{{'api_key': '{a2}', 'region': 'eu'}}", a2),
        _text(f'const cfg = {{token: "{a3}", retries: 3}}', a3),
        _text(f'[database]\npassword = "{a4}"\nhost = "db"', a4),
        _text(f"export DB_PASSWORD={a5}", a5),
        _text(f"db.password={a6}", a6),
        _text(f'variable "x" {{\n  secret_key = "{a7}"\n}}', a7),
    ]
    y1, y2 = _v(30), _v(30)
    ex["yaml-block"] = [
        _text(f"auth:\n  token: >-\n    {y1}\n  user: bob\n", y1),
        Example("lines", ["config:", "  api_key: |", f"    {y2}", "  region: eu"], (y2,)),
    ]
    x1, x2 = _v(20), _v(24)
    ex["xml-element"] = [
        _text(f"<config><user>bob</user><password>{x1}</password></config>", x1),
        _text(f"<apiKey>{x2}</apiKey>", x2),
    ]
    xa = _v(20)
    ex["xml-attribute"] = [_text(f'<db host="db.internal" password="{xa}"/>', xa)]
    add1, add2 = _v(26), _v(18)
    ex["xml-add"] = [
        _text(f'<appSettings><add key="PaymentApiKey" value="{add1}" /></appSettings>', add1),
        _text(f'<param name="password" value="{add2}"/>', add2),
    ]
    s1, s2 = _v(16), _v(16)
    ex["sql"] = [
        _text(f"CREATE USER app WITH PASSWORD '{s1}';", s1),
        _text(f"GRANT ALL ON app.* TO 'app'@'%' IDENTIFIED BY '{s2}';", s2),
    ]
    netrc = _v(18)
    ex["password-word"] = [_text(f"machine api.example.com login bob password {netrc}", netrc)]
    o1, o2, o3 = _v(24), "horse-" + _v(14), _v(20)
    ex["option"] = [
        _text(f"running: tool --api-key {o1} --region eu", o1),
        _text(f"gpg --batch --passphrase={o2} -d secrets.gpg", o2),
        _text(f"deploy --password '{o3}' --yes", o3),
    ]
    m1, m2, m3, m4 = _v(16), _v(20), _v(16), _v(24)
    ex["short-option"] = [
        _text(f"mysql -u root -p{m1} -h db app", m1),
        _text(f"docker login -u bob -p {m2} registry.example.com", m2),
        _text(f"sshpass -p {m3} ssh deploy@host", m3),
        _text(f"redis-cli -h cache -a {m4} ping", m4),
    ]
    u1, u2 = _v(18), _v(18)
    ex["user-password"] = [
        _text(f"curl -u admin:{u1} https://api.example.com; the password {u1} worked", u1),
        _text(f"wget --user ci:{u2} https://example.com/f", u2),
    ]
    g1, g2, g3 = _v(24), _v(24), _v(24)
    argv = ["--token", g1, f"--api-key={g2}", f"DB_PASS={g3}"]
    ex["argv"] = [Example("argv", argv, (g1, g2, g3))]
    e1 = _v(30)
    ex["environment"] = [Example("env", {"MY_SERVICE_TOKEN": e1}, (e1,))]
    c1, c2, c3 = _v(16), _v(86, _B64) + "==", _v(44, _B64)
    ex["connection-string"] = [
        _text(f"Server=db;Database=app;User Id=sa;Password={c1};", c1),
        _text(
            f"DefaultEndpointsProtocol=https;AccountName=acct;AccountKey={c2};"
            "EndpointSuffix=core.windows.net",
            c2,
        ),
        _text(
            "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=Root;"
            f"SharedAccessKey={c3}",
            c3,
        ),
    ]
    url1, url2 = _v(18), _v(20)
    ex["url-userinfo"] = [
        _text(f"postgres://app:{url1}@db.internal:5432/app (password {url1})", url1),
        _text(f"https://{url2}@git.example.com/repo.git", url2),
    ]
    q1, q2, q3 = _v(24), _v(24), _v(64, _HEX)
    inner = f"https://api.example.com/cb?token={q2}&x=1"
    ex["url-query"] = [
        _text(f"https://api.example.com/v1?token={q1}&page=2", q1),
        _text("https://app.example.com/login?next=" + quote(inner, safe=""), q2),
        _text(f"https://b.s3.amazonaws.com/k?X-Amz-Date=1&X-Amz-Signature={q3}", q3),
    ]
    k1, k2 = _v(32), _v(28)
    ex["cookie"] = [
        _text(f"Cookie: theme=dark; sid={k1}", k1),
        _text(f"Set-Cookie: session={k2}; Path=/; HttpOnly", k2),
    ]
    j1, j2 = _jwt(True), _jwt(False)
    ex["jwt"] = [_text(f"id_token={j1}", j1), _text(f"unsigned: {j2} end", j2)]
    body, ssh = _pem_body(), _pem_body()
    ex["pem"] = [
        _text(pem_head + "\n" + "\n".join(body) + "\n" + pem_end, *body),
        Example("lines", [ssh_head, *ssh, ssh_end], tuple(ssh)),
    ]
    ppk, mac = [_v(64, _B64) for _ in range(3)], _v(64, _HEX)
    ex["ppk"] = [
        _text(
            "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: ci\n"
            "Public-Lines: 1\nAAAAC3NzaC1lZDI1NTE5\nPrivate-Lines: 3\n"
            + "\n".join(ppk)
            + f"\nPrivate-MAC: {mac}",
            *ppk,
            mac,
        )
    ]
    service_key = _pem_body()
    account = json.dumps(
        {
            "type": "service_account",
            "project_id": "demo",
            "private_key": pem_head + "\n" + "\n".join(service_key) + "\n" + pem_end + "\n",
            "client_email": "ci@demo.iam.gserviceaccount.com",
        },
        indent=2,
    )
    nested = _b64(json.dumps({"password": _v(22)}))
    ex["base64"] = [
        _text(f"GOOGLE_CREDENTIALS_B64: {_b64(account)}", _b64(account)),
        _text(f"config {nested} loaded", nested),
    ]
    n1, n2 = _v(26), _v(26)
    ex["nested-json"] = [
        _json(
            {
                "content": [
                    {"type": "text", "text": json.dumps({"headers": [["X-Auth-Token", n1]]})},
                    {"type": "text", "text": json.dumps({"user": {"pin": 9182, "otp": n2}})},
                ]
            },
            n1,
            n2,
        )
    ]
    ghp = "gh" + "p_" + _v(36)
    xapp = "xa" + "pp-1-A0" + _v(9, string.digits) + "-" + _v(13, string.digits)
    xapp += "-" + _v(64, _HEX)
    tfc = _v(14) + ".atlas" + "v1." + _v(67, _ALNUM + "-_=")
    twilio = _v(32, _HEX)
    ex["shape"] = [
        _text(f"token {ghp} ok", ghp),
        _text(f"app token: {xapp}", xapp),
        _text(f"TFC {tfc}", tfc),
        _text(f"twilio AC{_v(32, _HEX)}:{twilio}", twilio),
    ]
    echoed = "Ech0/" + _v(14) + "+&" + _v(6)
    ex["known"] = [
        _json(
            {"password": echoed, "echo": "\n".join(encodings(echoed))},
            echoed,
        )
    ]
    return ex


def encodings(value: str) -> list[str]:
    """How a writer or a server may write ``value``: as is, JSON-escaped, percent- and
    form-encoded, HTML-escaped, base64, hex, upper and lower case."""
    raw = value.encode()
    return list(
        dict.fromkeys(
            [
                value,
                json.dumps(value)[1:-1],
                json.dumps(value)[1:-1].replace("/", "\\/"),
                quote(value, safe=""),
                quote_plus(value),
                html.escape(value),
                base64.b64encode(raw).decode(),
                base64.b64encode(raw).decode().rstrip("="),
                raw.hex(),
                raw.hex().upper(),
                value.upper(),
                value.lower(),
            ]
        )
    )


EXAMPLES: Final = _build()
VALUES: Final = tuple(dict.fromkeys(s for exs in EXAMPLES.values() for e in exs for s in e.secrets))


def leaked(data: bytes | str, values: tuple[str, ...] = VALUES) -> list[str]:
    """The values (in any of ``encodings``) that ``data`` holds."""
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
    found = []
    for value in values:
        if any(form in text for form in encodings(value) if len(form) >= 4):
            found.append(value)
    return found
