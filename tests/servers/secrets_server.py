"""An MCP server (official Python SDK) that handles fake credentials the way real ones leak.

It plants every value of ``tests/helpers/secret_corpus.py`` somewhere a recording would see it:
it echoes its arguments back as JSON inside a string (as many tools do), returns secrets
in structured content with an output schema (an integer and an enum under secret names),
prints them on stderr, prints a raw non-JSON line on stdout (stdio), reports its command
line and its environment, and over HTTP echoes the credentials the client sent in headers
and in the URL's query string. Outputs are deterministic.

``secrets_server.py [OPTIONS...]`` serves stdio; ``secrets_server.py http PORT [OPTIONS...]``
serves streamable HTTP.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Annotated, Any, Literal

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from mcp.server.mcpserver import Context, MCPServer
from pydantic import BaseModel, Field

from tests.helpers.secret_corpus import (
    AZURE_CONNECTION,
    BASIC_CREDENTIALS,
    CORPUS,
    POSTGRES_URL,
    echoes,
    forms_structured,
    forms_text,
)

app = MCPServer("cassette-test-secrets", version="1.0.0")


def log(text: str) -> None:
    sys.stderr.write(text + "\n")
    sys.stderr.flush()


@app.tool()
def login(  # the tool's arguments, as a client sends them
    user: str,
    password: str,
    pin: int,
    otp: str,
    auth: str,
    credentials: list[str],
    settings: dict[str, Any],
) -> str:
    """Echo the arguments back, as JSON inside the text (what many tools do)."""
    args = {
        "user": user,
        "password": password,
        "pin": pin,
        "otp": otp,
        "auth": auth,
        "credentials": credentials,
        "settings": settings,
    }
    log(f"login attempt for {user} with pin {pin} and otp {otp}")
    return json.dumps(args)


@app.tool()
def echo(message: str) -> str:
    """Say the message back."""
    return f"you said: {message}"


class Session(BaseModel):
    token: Annotated[int, Field(ge=1000, le=9999)]
    authorization: Literal["admin", "reader"]
    apiKey: str
    note: str


@app.tool()
def session_info() -> Session:
    """Structured content under secret names: an integer, an enum member, a string."""
    return Session(
        token=int(CORPUS["pin"]),
        authorization="reader",
        apiKey=CORPUS["npm"],
        note=f"alerts go to https://{CORPUS['slack_webhook']}",
    )


@app.tool()
def environment() -> str:
    """The secrets of the server's environment and configuration, as a server logs them."""
    lines = [f"{name}={os.environ.get(name, '')}" for name in sorted(os.environ) if name.isupper()]
    lines += [
        f"db password alone: {os.environ.get('DB_PASS', '')}",
        f"aws_secret_access_key = {os.environ.get('AWS_SECRET_ACCESS_KEY', '')}",
        f"storage: {AZURE_CONNECTION}",
        f"database: {POSTGRES_URL}",
        f"Authorization: Basic {BASIC_CREDENTIALS}",
        f"id_token: {CORPUS['jwt']}",
        CORPUS["pem_private_key"],
    ]
    return "\n".join(lines)


@app.tool()
def command_line() -> str:
    """The server's own command line, as a diagnostics tool reports it."""
    return json.dumps(sys.argv)


@app.tool()
def keys() -> str:
    """Token shapes of many families in a tool's text output."""
    names = ["github_classic", "github_oauth", "github_fine_grained", "stripe_live"]
    names += ["openai", "anthropic", "slack_bot", "aws_access_key_id", "google_api"]
    names += ["sendgrid", "pypi", "docker", "vault", "digitalocean", "groq"]
    names += ["mailgun", "square", "twilio", "alibaba", "doppler"]
    return "\n".join(f"{name}: {CORPUS[name]}" for name in names)


class Account(BaseModel):
    apiKey: Annotated[str, Field(pattern=r"^ak_[0-9a-f]{16}$")]
    plan: str


@app.tool()
def account() -> Account:
    """A secret under a property whose output schema gives a pattern: a replay the SDK
    validates must still match it."""
    return Account(apiKey=CORPUS["patterned_key"], plan="team")


@app.tool()
def forms(password: str) -> dict[str, object]:
    """The forms real tools print (text and structured), and ``password`` echoed back
    encoded as servers do."""
    echoed = "\n".join(f"{how}: {text}" for how, text in echoes(password).items())
    return {"text": forms_text() + "\n" + echoed, **forms_structured()}


@app.tool()
def whoami(ctx: Context) -> str:  # type: ignore[type-arg]
    """Over HTTP: the credentials the client sent, echoed (headers and query string)."""
    request = ctx.request_context.request
    if request is None:
        return "stdio: no headers"
    headers = getattr(request, "headers", {})
    query = str(getattr(request, "url", ""))
    seen = [headers.get("authorization", ""), headers.get("x-api-key", "")]
    seen.append(headers.get("cookie", ""))
    bare = headers.get("authorization", "").partition(" ")[2]
    return json.dumps({"seen": seen, "bare": bare, "url": query})


def main() -> None:
    log(f"starting; password={CORPUS['stderr_password']}")
    log(f"SECRET={CORPUS['free_text_secret']} connecting to {POSTGRES_URL}")
    if sys.argv[1:2] == ["http"]:
        app.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
        return
    # A chatty stdio server prints a line that is not JSON-RPC.
    sys.stdout.write(f"ready: gitlab {CORPUS['gitlab']} hf {CORPUS['huggingface']}\n")
    sys.stdout.flush()
    app.run("stdio")


if __name__ == "__main__":
    main()
