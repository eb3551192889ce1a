"""The places a secret is known by, as one table a reviewer can check.

A value is secret because of where it stands, whatever it looks like: beside a secret
name, after an ``Authorization`` scheme, in a private-key container. Each row here is one
such context: how it is written (``VALUE`` stands for the secret) and the rule named in
the placeholder that replaces it. The rules themselves are in
``cassette.core.redaction.secret_table`` (text) and ``cassette.core.redaction.secret_places``
(JSON); this table is what they promise, written once: docs/redaction.md shows it (a test holds the
page to it) and ``tests/unit/test_secret_contexts.py`` runs an example of every row.
"""

from __future__ import annotations

from typing import Final

import attrs

__all__ = ["CONTEXTS", "Context", "markdown_table"]


@attrs.frozen
class Context:
    """One place a secret stands: its name, how it is written, and the rule(s) whose
    placeholder replaces it."""

    name: str
    written: str
    rules: tuple[str, ...]


CONTEXTS: Final = (
    Context(
        "authorization",
        "`Authorization: SCHEME VALUE`, `Proxy-Authorization: ...`, any scheme (`Bot`, "
        "`ApiKey`, `SSWS`, `Splunk`, `DeepL-Auth-Key`, `Zoho-oauthtoken`, `Token`...)",
        ("authorization",),
    ),
    Context("bearer", "`Bearer VALUE` anywhere in a text", ("bearer",)),
    Context(
        "basic",
        "`Basic VALUE` (base64 of `user:password`); the `user:password` it decodes to, and "
        "the password, wherever they are echoed",
        ("basic-auth",),
    ),
    Context("digest", '`Digest username="...", ..., response="VALUE"`', ("digest",)),
    Context(
        "signature",
        "`sig=VALUE`: a shared access signature's URL, `SharedAccessSignature sr=...&sig=VALUE`",
        ("signature",),
    ),
    Context(
        "member",
        '`{"apiKey": VALUE}`: a JSON member with a secret name (`token`, `password`, '
        "`client_secret`, `pat`, `sig`...), any type, everything inside it",
        ("key",),
    ),
    Context(
        "pair",
        '`{"name": "X-Api-Key", "value": VALUE}`: a secret-named header or variable, a cookie',
        ("key",),
    ),
    Context(
        "header-list",
        '`[["Authorization", VALUE], ["X-Api-Key", VALUE]]`: headers as a list of pairs',
        ("key",),
    ),
    Context(
        "jwk",
        '`{"kty": "RSA", ..., "d": VALUE, "p": VALUE, ...}`: a JSON Web Key\'s private '
        "members, as JSON or as JSON text",
        ("key", "jwk"),
    ),
    Context(
        "assignment",
        "`password=VALUE`, `api_key: VALUE`, `\"secret\": \"VALUE\"`, `{'token': 'VALUE'}`, "
        '`{token: "VALUE"}`, `DB_PASS=VALUE`, `db.password = VALUE`: JSON and Python or '
        "JavaScript reprs in text, YAML, TOML, INI, .env, properties, HCL",
        ("assignment",),
    ),
    Context(
        "yaml-block",
        "`token: >-` or `token: |`, then VALUE on the next line, indented (also line by "
        "line on stderr)",
        ("assignment", "key"),
    ),
    Context(
        "xml-element", "`<password>VALUE</password>`, `<apiKey>VALUE</apiKey>`", ("assignment",)
    ),
    Context("xml-attribute", '`<db password="VALUE"/>`', ("assignment",)),
    Context(
        "xml-add",
        '`<add key="PaymentApiKey" value="VALUE"/>`, `<param name="password" value="VALUE"/>`',
        ("assignment",),
    ),
    Context("sql", "`WITH PASSWORD 'VALUE'`, `IDENTIFIED BY 'VALUE'`", ("password",)),
    Context(
        "password-word",
        "`password VALUE` (`.netrc`, log lines), when VALUE could not be a word",
        ("password",),
    ),
    Context(
        "option",
        "`--api-key VALUE`, `--passphrase=VALUE`, `--password 'VALUE'` in a printed command",
        ("argument", "password"),
    ),
    Context(
        "short-option",
        "`mysql -pVALUE`, `docker login -p VALUE`, `sshpass -p VALUE`, `redis-cli -a VALUE`",
        ("command-line",),
    ),
    Context(
        "user-password",
        "`curl -u user:VALUE`, `--user user:VALUE` (and VALUE alone wherever it recurs)",
        ("command-line",),
    ),
    Context(
        "argv",
        "the recorded command line: `--token VALUE`, `--api-key=VALUE`, `NAME=VALUE`",
        ("argument",),
    ),
    Context(
        "environment",
        "the value of a secret-named environment variable (`GITHUB_TOKEN`, `DB_PASS`), wherever "
        "it appears",
        ("env",),
    ),
    Context(
        "connection-string",
        "`Password=VALUE;`, `Pwd=VALUE;`, `AccountKey=VALUE;`, `SharedAccessKey=VALUE`",
        ("assignment",),
    ),
    Context(
        "url-userinfo",
        "`scheme://user:VALUE@host`, `://:VALUE@host`, `://VALUE@host` (and the password "
        "alone wherever it recurs)",
        ("url-credentials",),
    ),
    Context(
        "url-query",
        "`?token=VALUE&api_key=VALUE`, `X-Amz-Signature=VALUE`, also percent-encoded inside "
        "another URL",
        ("assignment",),
    ),
    Context("cookie", "`Cookie: a=VALUE; b=VALUE`, `Set-Cookie: sid=VALUE`", ("cookie",)),
    Context("jwt", "a JSON Web Token, signed or not (`alg: none`)", ("jwt",)),
    Context(
        "pem",
        "a PEM or OpenSSH private key's body, also without its END line and line by line",
        ("private-key",),
    ),
    Context("ppk", "a PuTTY key's `Private-Lines` and `Private-MAC`", ("private-key",)),
    Context(
        "base64",
        "base64 of JSON, a PEM or a PuTTY key that holds a secret (a service-account file)",
        ("base64",),
    ),
    Context(
        "nested-json",
        "JSON held in a string (a tool's text content, a log line): every context above",
        ("key",),
    ),
    Context(
        "shape",
        "a vendor's token shape: `ghp_`, `glpat-`, `sk_live_`, `xoxb-`, `xapp-`, `AKIA`, "
        "`ID.atlasv1.SECRET`, a Twilio `ACSID:TOKEN`... (`secret_table.py`)",
        ("github", "gitlab", "stripe", "slack", "aws-key", "terraform", "twilio"),
    ),
    Context(
        "known",
        "a value met once, wherever it recurs: JSON-escaped, percent- and form-encoded, "
        "HTML-escaped, base64, hex, upper or lower case",
        ("key", "env"),
    ),
)


def markdown_table() -> str:
    """The table as docs/redaction.md shows it."""
    lines = ["| context | how it is written (VALUE is the secret) | placeholder rule |"]
    lines.append("|---|---|---|")
    for row in CONTEXTS:
        rules = ", ".join(f"`{r}`" for r in row.rules)
        lines.append(f"| `{row.name}` | {row.written} | {rules} |")
    return "\n".join(lines)
