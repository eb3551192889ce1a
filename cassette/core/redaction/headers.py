"""Headers a person asks to send upstream (``--header 'NAME: VALUE'``), with credentials
taken from the environment.

Theory of operation
-------------------
A header is given as a *template*: ``Authorization: Bearer ${GITHUB_TOKEN}``. The
template is what a command line, a scenarios file or ``[tool.cassette]`` holds, so a
token never has to be written out; ``expand`` fills the ``${VAR}`` references from an
environment the caller passes in (this module reads none: values in, values out).

Invariants:

* a value is never part of an error message: a refusal names the header and the variable
  (``--header Authorization: ${GITHUB_TOKEN} is not set``), never what was typed after the
  colon, since a person may have pasted a token there;
* a reference to a variable that is not set is refused as a whole, before anything is
  sent or recorded (an empty ``Bearer`` header would get a 401 that says nothing useful);
* ``Expanded.secrets`` holds every value the recording must redact wherever it shows up
  (each variable's value, the whole value of a header that used one, and the credentials
  of an ``Authorization`` or secret-named header), and ``Expanded.names`` the header
  names, which are all a cassette keeps.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Final

import attrs

from cassette.core.redaction.secret_rules import secret_header_values
from cassette.errors import UsageError

__all__ = [
    "Expanded",
    "HeaderTemplate",
    "expand",
    "header_secrets",
    "parse_header",
    "parse_headers",
    "refusal",
]

#: RFC 9110 token characters: what a header name may be made of.
_NAME: Final = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
_REFERENCE: Final = re.compile(r"\$\{([^}]*)\}")
_VARIABLE: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
#: Headers the transport owns: sending one of these would break the exchange, not add to it.
_RESERVED: Final = frozenset(
    {
        "host",
        "content-length",
        "content-type",
        "transfer-encoding",
        "connection",
        "accept",
        "mcp-session-id",
        "mcp-protocol-version",
    }
)


@attrs.frozen
class HeaderTemplate:
    """One header to send: its name, and its value with ``${VAR}`` references unexpanded."""

    name: str
    template: str

    @property
    def variables(self) -> tuple[str, ...]:
        """The environment variables the value refers to, in order."""
        return tuple(m.group(1) for m in _REFERENCE.finditer(self.template))


@attrs.frozen
class Expanded:
    """Templates filled from an environment: the headers to send, the values to redact,
    and the names a cassette may record."""

    headers: Mapping[str, str]
    secrets: tuple[str, ...]

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self.headers)


def parse_header(text: str, source: str = "--header") -> HeaderTemplate:
    """``NAME: VALUE`` as a template; a ``UsageError`` naming ``source`` (and never the
    value) when it is not one."""
    name, colon, value = text.partition(":")
    name = name.strip()
    if not colon or not name:
        example = "'Authorization: Bearer ${TOKEN}'"
        raise UsageError(f"{source}: expected 'NAME: VALUE' (e.g. {example})")
    return _template(name, value.strip(), source)


def parse_headers(
    given: Iterable[str] | Mapping[str, object], source: str = "--header"
) -> tuple[HeaderTemplate, ...]:
    """Templates from ``NAME: VALUE`` strings, or from a table of names to values (a
    scenarios file's ``[target] headers``, ``[tool.cassette] headers``)."""
    if isinstance(given, Mapping):
        out = []
        for name, value in given.items():
            if not isinstance(value, str):
                raise UsageError(f"{source}: the value of {name!r} must be a string")
            out.append(_template(str(name).strip(), value.strip(), source))
        return _unique(out, source)
    return _unique([parse_header(text, source) for text in given], source)


def _template(name: str, value: str, source: str) -> HeaderTemplate:
    if not _NAME.fullmatch(name):
        raise UsageError(f"{source}: {name!r} is not a header name")
    if name.lower() in _RESERVED:
        raise UsageError(f"{source}: {name} is set by the transport itself and cannot be given")
    if any(c in value for c in "\r\n\0"):
        raise UsageError(f"{source}: the value of {name} holds a line break or NUL")
    template = HeaderTemplate(name, value)
    for variable in template.variables:
        if not _VARIABLE.fullmatch(variable):
            raise UsageError(
                f"{source}: {name}: ${{{variable}}} is not an environment variable's name"
            )
    return template


def _unique(templates: list[HeaderTemplate], source: str) -> tuple[HeaderTemplate, ...]:
    seen: set[str] = set()
    for template in templates:
        if template.name.lower() in seen:
            raise UsageError(f"{source}: {template.name} is given twice")
        seen.add(template.name.lower())
    return tuple(templates)


def expand(
    templates: Iterable[HeaderTemplate], environ: Mapping[str, str], source: str = "--header"
) -> Expanded:
    """The headers with every ``${VAR}`` filled from ``environ``; an unset (or empty)
    variable is a ``UsageError`` naming the header and the variable."""
    headers: dict[str, str] = {}
    secrets: list[str] = []
    for template in templates:
        for variable in template.variables:
            if not environ.get(variable):
                raise UsageError(
                    f"{source} {template.name}: ${{{variable}}} is not set in the environment"
                )

        def fill(match: re.Match[str]) -> str:
            return environ[match.group(1)]

        value = _REFERENCE.sub(fill, template.template)
        if any(c in value for c in "\r\n\0") or not value.isascii():
            raise UsageError(
                f"{source} {template.name}: its value holds a line break, a NUL or a "
                "character outside ASCII, which a header cannot carry"
            )
        headers[template.name] = value
        if template.variables:  # taken from the environment: a credential, by intent
            secrets += [environ[v] for v in template.variables]
            secrets.append(value)
    pairs = [(k.encode("ascii"), v.encode("ascii")) for k, v in headers.items()]
    secrets += secret_header_values(pairs)  # ``Bearer abc``: ``abc`` alone too
    return Expanded(headers, tuple(dict.fromkeys(s for s in secrets if s)))


def refusal(status: int, where: str, names: Iterable[str] = (), *, flow: bool = True) -> str:
    """One line saying which credential a server refused (HTTP 401 or 403) and how to give
    one: the header names that were sent (``names``, never values), or, when none was, the
    authorization flow (``flow``: a client that can run it is on the other side, as with
    the recording proxy). ``where`` names the server (already redacted)."""
    given = ", ".join(names)
    if status == 403:
        held = f"the credentials in {given}" if given else "the token of the authorization flow"
        return f"{where} refused the request (HTTP 403): {held} lack a permission (a scope)"
    if given:
        return (
            f"{where} refused the credentials in {given} (HTTP 401): check the value "
            "--header gives (and the variable it reads)"
        )
    if not flow:
        return (
            f"{where} asks for credentials (HTTP 401): none was sent; give one with "
            "--header 'Authorization: Bearer ${TOKEN}' (its value from the environment)"
        )
    return (
        f"{where} asks for credentials (HTTP 401): none was sent; the client may log in "
        "through the authorization flow (the recording proxy serves it), or give one with "
        "--header 'Authorization: Bearer ${TOKEN}'"
    )


def header_secrets(headers: Mapping[str, str]) -> list[str]:
    """The credentials among headers held as a mapping (``Target.headers``), as the
    redactor's ``secret_header_values`` finds them in a request's raw headers."""
    from cassette.core.redaction.secret_rules import secret_header_values

    return secret_header_values(
        (k.encode("latin-1", "replace"), v.encode("latin-1", "replace")) for k, v in headers.items()
    )
