"""The rule table: what each secret's shape is, where its match starts (a literal
trigger) and where the secret sits in it (group ``s``). Finding them fast is
``cassette.core.redaction.secret_rules``'s work; this module is the table alone, so a new rule is
one line here.

The formats are public facts (documented prefixes and lengths, as gitleaks and
detect-secrets list them); the table is ours.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable
from functools import cache
from typing import Final, NamedTuple

import attrs

from cassette.core.redaction.secret_names import _compiled

# -- spans ---------------------------------------------------------------------------------


class Span(NamedTuple):
    """A secret at ``text[start:end]``, found by ``rule``. A tuple: a text holding
    thousands of secrets makes thousands, and a tuple costs a third of a class's
    ``__init__``."""

    start: int
    end: int
    rule: str


Check = Callable[[str], bool]


@attrs.frozen
class _Rule:
    name: str
    triggers: tuple[str, ...]  # literals the match starts with (lower case when ``folded``)
    source: str  # matched at a trigger's position; group "s" is the secret
    flags: int = 0  # the expression's flags (``re.IGNORECASE``)
    folded: bool = False  # triggers are found case-insensitively
    check: Check | None = None  # a last look at the secret (cheap, optional)
    word_start: bool = False  # the trigger must not continue a lower-case word
    #: searched on its own in a long text: its match holds no run of 16 token characters
    #: for the long path's run finder to see (``secret_rules._spans_long``)
    alone: bool = False
    #: the secret starts this many characters before the trigger (a token whose literal
    #: sits in its middle, ``ID.atlasv1.SECRET``; the expression's look-behind checks them)
    back: int = 0
    #: its match always holds a run of 16 token characters, so a text without one (found
    #: in C before any scout) need not be scouted for its triggers
    in_run: bool = False
    #: a character every match holds: a text without it is not probed for the triggers
    #: (a single-character ``in`` costs a tenth of a word's; see ``secret_rules``)
    gate: str = ""
    #: its match always holds another rule's word ("password" in ``<add key="password"``):
    #: that word's probe stands for its triggers
    probed: bool = True

    @property
    def pattern(self) -> re.Pattern[str]:
        """The compiled expression (compiled by the first rule match that needs it)."""
        return _compiled(self.source, self.flags)


def _basic_credentials(secret: str) -> bool:
    """``Basic`` is followed by base64 of ``user:password``, not by any word."""
    try:
        return b":" in base64.b64decode(secret + "=" * (-len(secret) % 4), validate=True)
    except (binascii.Error, ValueError):
        return False


def _credential_like(secret: str) -> bool:
    """A word after ``password`` is a secret only if no sentence could hold it: it has a
    digit or a sign, or mixes cases past its first letter (``reset``, ``Reset`` are not,
    nor ``reset.`` ending a sentence)."""
    word = secret.rstrip(".,;:!?)")
    if not word.isalpha():
        return True
    return len(word) >= 8 and not word.islower() and not word.istitle()


_BODY: Final = r"[A-Za-z0-9_\-]"


def _prefixed(name: str, prefixes: tuple[str, ...], body: str, *, alone: bool = False) -> _Rule:
    """A token shape: a literal prefix and its body. ``alone`` for a body that may hold no
    run of 16 token characters (it holds ``.``, ``/``, ``+`` or ``=``)."""
    alternatives = "|".join(re.escape(p) for p in prefixes)
    return _Rule(name, prefixes, rf"(?P<s>(?:{alternatives}){body})", alone=alone)


# A value runs to a space, a quote, a comma or a closing bracket; to "&" only where the
# next query parameter starts ("token=abc&api_key=xyz"), since passwords hold "&" too.
# Percent-encoded inside another URL, a value runs to the encoded "&" ("%26").
# A run of plain characters is taken whole (possessive: nothing to try again inside it).
_VALUE_END: Final = r"(?:[^\s\"'&,;<>`\\)\]}%]++|%(?!26)|&(?![A-Za-z0-9_.-]+=))"
# "password=", "api_key: ", '"secret": "', "DB_PASS = ", "token\": \"" (JSON in a string);
# a YAML block scalar ("token: >-" and the value on the next line, indented); an XML
# element ("<password>VALUE</password>": its value runs to the "<" of its end tag).
_ASSIGN: Final = (
    r"(?:[-_]?(?:key|id|value|string|token))?"
    r"(?:\\?[\"']?[ \t]*(?:[:=]|%3[ad])[ \t]*\\?[\"']?"
    r"(?:[|>][-+0-9]{0,2}[ \t]*(?:\r?\n|\\r?\\n)[ \t]+)?"
    r"|>(?=[^<>\s]{1,400}</))"
)
#: A short word and more words after "secret: " or "token: ": a sentence ("per secret: a
#: known secret"), not a value.
_PROSE: Final = r"[a-z]{1,7}[ \t]+[a-z]"
#: A YAML block scalar's indicator at the end of a line ("token: |"): not a value.
_BLOCK_HEAD: Final = r"\|[-+0-9]{0,2}[ \t]*(?:$|\r?\n|\\r?\\n)"
_SCHEME: Final = r"(?:(?i:bearer|basic|token|digest)[ \t]+)?"
_KEYWORDS: Final = (
    "password",
    "passwd",
    "passphrase",
    "passcode",
    "pass",
    "pwd",
    "secret",
    "token",
    "apikey",
    "api_key",
    "api-key",
    "access_key",
    "accesskey",
    "access-key",
    "accountkey",
    "private_key",
    "privatekey",
    "auth",
    "credential",
    "credentials",
    "cookie",
    "signature",
    "pin",
    "otp",
    "pgpassword",
)


def _not_a_flag_value(secret: str) -> bool:
    """``user:password`` whose password is not a number (``-u 1000:1000`` is a uid and a
    gid) nor empty."""
    password = secret.partition(":")[2]
    return bool(password) and not password.isdigit()


def _not_a_word(secret: str) -> bool:
    """A value after an option in free text is a credential, not a word of a sentence
    about the option ("what --require-auth does")."""
    return not (secret.isalpha() and secret.islower())


def _long_enough(secret: str) -> bool:
    """A signature is never a short word (``sig=1`` is a flag)."""
    return len(secret) >= 8


def _not_a_switch(secret: str) -> bool:
    """A value beside a secret name that is a setting, not a credential (``true``)."""
    return secret.lower() not in ("true", "false", "yes", "no", "none", "null", "on", "off")


#: Smallest base64 text worth decoding to look inside (a secret in JSON needs its braces,
#: its name and its value).
_NESTED_MIN: Final = 24
_NESTED_MAX: Final = 1 << 20


def _holds_secret(secret: str) -> bool:
    """Base64 of a text that holds a secret by any rule (a service-account JSON, a PEM
    key): decoded, then searched like any text (a bounded size: each level is 3/4 of the
    one above, so nesting ends)."""
    if not _NESTED_MIN <= len(secret) <= _NESTED_MAX:
        return False
    text = decoded_text(secret)
    return text is not None and bool(SEARCH) and bool(SEARCH[0](text))


#: What searches a text with every rule (``secret_rules.find_spans``, which puts itself
#: here when it is imported): base64 nesting searches the text it decodes with it, and
#: this table cannot import the module that reads it.
SEARCH: Final[list[Callable[[str], list[Span]]]] = []


def decoded_text(secret: str) -> str | None:
    """The UTF-8 text base64 (standard or URL-safe, padded or not) decodes to, or
    ``None``."""
    padded = secret + "=" * (-len(secret) % 4)
    try:
        raw = base64.b64decode(padded.replace("-", "+").replace("_", "/"), validate=True)
        return raw.decode("utf-8")
    except (binascii.Error, ValueError):
        return None


#: Names that say the value beside them is secret, in ``<add key="NAME" value="...">``
#: and ``<param name="NAME" value="...">`` (the name ends with one of them).
_PAIR_NAMES: Final = (
    r"(?:password|passwd|pwd|passphrase|secret|token|api[_-]?key|access[_-]?key"
    r"|private[_-]?key|credentials?|signing[_-]?key|account[_-]?key)"
)


#: The command words after which a password follows an option, and what leads to it. Each
#: word is a rule of its own, whose expression starts with that one literal: a long text is
#: searched for each rule on its own, and the engine skips to a leading literal in C but
#: tries an expression that starts with an alternation at every character.
_COMMAND_LEADS: Final = (
    # mysql -pVALUE (attached: -p alone asks for it; -P is a port)
    *(
        (word, word + r"[a-z-]*[ \t][^\n|;&]{0,300}?[ \t]-p(?=[^\s\"'\\-])")
        for word in ("mysql", "mariadb")
    ),
    # docker login -p VALUE, helm registry login --password VALUE, ...
    ("login", r"login[ \t][^\n|;&]{0,300}?[ \t](?:-p|--password)(?:[ \t]+|=)\\?['\"]?"),
    ("sshpass", r"sshpass[ \t]+-p[ \t]*\\?['\"]?"),
    ("redis-cli", r"redis-cli[ \t][^\n|;&]{0,300}?[ \t](?:-a|--pass)[ \t]+\\?['\"]?"),
)


def _context_rules() -> tuple[_Rule, ...]:
    """The rules of a secret known by where it stands, not by its shape: an
    ``Authorization`` header of any scheme, a signature parameter, a name beside a value
    in XML, SQL and command lines, private-key containers, and base64 nesting."""
    return (
        _Rule(  # any scheme (Bot, ApiKey, SSWS, DeepL-Auth-Key...) and its credential
            "authorization",
            ("authorization",),
            r"authorization\\?[\"']?[ \t]*(?:[:=]|%3a)[ \t]*\\?[\"']?"
            # Digest and SharedAccessSignature carry parameters: their own rules
            r"(?!(?:digest|sharedaccesssignature)[ \t])"
            # a scheme and its credential, or a credential alone (then no word follows it:
            # "Basic [REDACTED...]" is a scheme, "required for" a sentence)
            r"(?:[A-Za-z][A-Za-z0-9._-]{0,40}[ \t]+(?=[A-Za-z0-9._~+/:-]{4})"
            r"|(?=[A-Za-z0-9._~+/:-]{4,}+=*+(?![ \t]+[A-Za-z0-9._~+/\[%-])))"
            r"(?P<s>[A-Za-z0-9._~+/:-]{4,}=*)",
            re.IGNORECASE,
            folded=True,
            word_start=True,
        ),
        _Rule(  # Digest's response, wherever it stands among the parameters
            "digest",
            ("digest",),
            r"digest[ \t]+[a-z][^\n]{0,800}?(?<![a-z])response[ \t]*=[ \t]*\\?\"?"
            r"(?P<s>[A-Fa-f0-9]{16,128})",
            re.IGNORECASE,
            folded=True,
            word_start=True,
            alone=True,
            in_run=True,  # an MD5 or a SHA-256, in hex
        ),
        _Rule(  # sig= of a shared access signature (Azure SAS URLs, SharedAccessSignature)
            "signature",
            ("sig=", "sig%3d"),
            rf"sig(?:=|%3d)(?P<s>{_VALUE_END}{{1,400}})",
            re.IGNORECASE,
            folded=True,
            check=_long_enough,
            word_start=True,
            alone=True,
        ),
        *(
            _Rule(  # <add key="PaymentApiKey" value="..."/>, <param name="password" value=...>
                "assignment",
                (attribute + "=",),
                rf"{attribute}=\\?[\"'][A-Za-z0-9_.:-]{{0,60}}?{_PAIR_NAMES}(?:[_-]?(?:key|id))?"
                r"\\?[\"'][ \t]+value=\\?[\"'](?P<s>[^\"'\\]{1,400})",
                re.IGNORECASE,
                folded=True,
                check=_not_a_switch,
                word_start=True,
                alone=True,
                probed=False,
            )
            for attribute in ("key", "name")
        ),
        _Rule(  # SQL: IDENTIFIED BY 'VALUE' (PASSWORD 'VALUE' is the password rule's)
            "password",
            ("identified",),
            r"identified[ \t]+(?:with[ \t]+[a-z0-9_]+[ \t]+)?(?:by|as)[ \t]+(?:password[ \t]+)?"
            r"'(?P<s>[^'\"\\]{1,200})'",
            re.IGNORECASE,
            folded=True,
            word_start=True,
            alone=True,
            gate="'",
        ),
        _Rule(  # curl -u user:password, --user user:password (not -u 1000:1000)
            "command-line",
            ("-u", "--user"),
            r"(?:-u[ \t]*|--user(?:[ \t]+|=))\\?['\"]?"
            r"(?P<s>[^\s:\"'\\-][^\s:\"'\\]{0,100}:[^\s\"'\\]{1,200})",
            check=_not_a_flag_value,
            word_start=True,
            alone=True,
            gate="-",
        ),
        *(
            _Rule(  # mysql -pVALUE, docker login -p VALUE, ... (``_COMMAND_LEADS``)
                "command-line",
                (word,),
                lead + r"(?P<s>[^\s\"'\\-][^\s\"'\\]{2,200})",
                word_start=True,
                alone=True,
                gate="-",
            )
            for word, lead in _COMMAND_LEADS
        ),
        _Rule(  # a JWK's private members in JSON text ("d", the primes and their exponents)
            "jwk",
            ('"d"', '"p"', '"q"', '"dp"', '"dq"', '"qi"', '"k"'),
            r"\"(?:d|p|q|dp|dq|qi|k)\"[ \t]*:[ \t]*\"(?P<s>[A-Za-z0-9_-]{20,})\"",
        ),
        _Rule(  # a PuTTY key's private lines, and the MAC a passphrase could be tried on
            "private-key",
            ("Private-Lines:",),
            r"Private-Lines:[ \t]*[0-9]{1,4}(?:\r?\n|\\r?\\n)(?P<s>[A-Za-z0-9+/=]{4,200}"
            r"(?:(?:\r?\n|\\r?\\n)[A-Za-z0-9+/=]{4,200}(?![A-Za-z0-9+/=:-])){0,200})",
            alone=True,
        ),
        _Rule(
            "private-key",
            ("Private-MAC:",),
            r"Private-MAC:[ \t]*(?P<s>[0-9a-f]{16,128})",
            in_run=True,
        ),
        *(
            _Rule(  # base64 of JSON (a service account, a JWK) or of a PEM or PuTTY key
                "base64",
                triggers,
                # only where a base64 run starts (inside one, every "ey" would decode the
                # rest); the literal first, so a long text is searched for it in C
                rf"(?P<s>{lead}(?<![A-Za-z0-9+/_-]{lead})(?=[A-Za-z0-9_-]{{{16 - len(lead)}}})"
                rf"{rest}[A-Za-z0-9+/_-]{{20,}}={{0,2}})(?![A-Za-z0-9+/=._-])",
                check=_holds_secret,
                # its first 16 characters are letters and digits: a long text's run
                # finder sees it (``alone`` would search 38 MB once more per lead)
                in_run=True,
            )
            for lead, rest, triggers in (
                ("ew", "(?:og|oi|0K)", ("ewog", "ewoi", "ew0K")),
                ("ey", "(?:Ai|J)", ("eyAi", "eyJ")),
                ("LS0tLS1CRUdJT", "", ("LS0tLS1CRUdJT",)),
                ("UHVUVFkt", "", ("UHVUVFkt",)),
            )
        ),
    )


@cache
def _rules() -> tuple[_Rule, ...]:
    """The rule table, built on first use."""
    return (
        # scheme://user:password@host, scheme://:password@host, scheme://token@host; the
        # userinfo runs to the last "@" before the path, so "admin:p@ss@host" loses "p@ss" too.
        _Rule(
            "url-credentials",
            ("://",),
            # the look-ahead fails a URL with no "@" in its authority without backtracking
            # a password may hold "/" ("user:pa/ss@host"), never a port ("host:8080/a@b")
            r"://(?=[^\s?#@\"'<>]*+@)(?P<s>[^\s/?#@\"'<>:]+:(?![0-9]*[/@])[^\s?#@\"'<>/]*/"
            r"[^\s?#@\"'<>]*|[^\s/?#@\"'<>]*(?:@[^\s/?#@\"'<>]*)*)@[^\s/?#@\"'<>]",
        ),
        _Rule(  # the same, JSON-escaped ("postgres:\/\/admin:pw@db")
            "url-credentials",
            (":\\/\\/",),
            r":\\/\\/(?=[^\s?#@\"'<>]*+@)(?P<s>[^\s/?#@\"'<>\\]*(?:@[^\s/?#@\"'<>\\]*)*)"
            r"@[^\s/?#@\"'<>\\]",
        ),
        _Rule(  # every cookie of a Cookie or Set-Cookie line, not only the first
            "cookie",
            ("cookie",),
            r"cookie\\?[\"']?[ \t]*:[ \t]*\\?[\"']?"
            r"(?P<s>[^\s;\"'\\]{1,4000}(?:;[ \t]*[^\s;\"'\\]{1,4000}){0,100})",
            re.IGNORECASE,
            folded=True,
            word_start=True,
            alone=True,
        ),
        _Rule(  # "password VALUE" (.netrc, log lines): only a value no word could be
            "password",
            ("password", "passwd", "passphrase"),
            # quoted too: SQL's PASSWORD 'VALUE'
            r"pass(?:word|wd|phrase)[ \t]+\\?['\"]?(?P<s>[^\s\"'<>`\\]{6,200})",
            re.IGNORECASE,
            folded=True,
            check=_credential_like,
            word_start=True,
            alone=True,
        ),
        _Rule(
            "bearer",
            ("bearer",),
            r"bearer[ \t]+(?P<s>[A-Za-z0-9._~+/=-]{8,})",
            re.IGNORECASE,
            folded=True,
            word_start=True,
        ),
        _Rule(
            "basic-auth",
            ("basic",),
            r"basic[ \t]+(?P<s>[A-Za-z0-9+/]{8,}={0,2})",
            re.IGNORECASE,
            folded=True,
            check=_basic_credentials,
            word_start=True,
        ),
        _Rule(
            "assignment",
            _KEYWORDS,
            rf"(?:{'|'.join(re.escape(k) for k in _KEYWORDS)}){_ASSIGN}{_SCHEME}"
            # a PEM key's first line is the private-key rule's, not a value
            rf"(?!{_BLOCK_HEAD}|{_PROSE}|-----)(?P<s>{_VALUE_END}{{1,400}})",
            re.IGNORECASE,
            folded=True,
            word_start=True,
        ),
        # --secret-key VALUE, --passphrase=VALUE in a logged command line
        _Rule(
            "argument",
            ("--",),
            r"--(?:[A-Za-z0-9]+[-_])*(?i:password|passwd|passphrase|secret|token|pass|pwd|"
            r"(?:api|secret|access|private|client)[-_]?key|auth|credentials?)"
            rf"(?:=|[ \t]+|\\?\"[ \t]*,[ \t]*\\?\")\\?['\"]?(?P<s>(?!-){_VALUE_END}{{1,400}})",
            check=_not_a_word,
        ),
        _Rule(
            "private-key",
            ("-----BEGIN",),
            r"-----BEGIN[A-Z0-9 ]{0,40} PRIVATE KEY(?: BLOCK)?-----"
            # to its END line, or, with none (the first lines of a file), its base64 body
            r"(?P<s>[\s\S]{1,20000}?(?=-----END[A-Z0-9 ]{0,40} PRIVATE KEY(?: BLOCK)?-----)"
            r"|(?:(?:\r?\n|\\r?\\n)[A-Za-z0-9+/=]{16,200}){1,200})",
        ),
        _Rule(
            "jwt",
            ("eyJ",),
            # signed, or not (``alg: none``: nothing after the last dot)
            r"(?P<s>eyJ[A-Za-z0-9_-]{13,}\.eyJ[A-Za-z0-9_-]{8,}\.(?:[A-Za-z0-9_-]{8,})?)",
        ),
        _prefixed(
            "github",
            ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
            r"[A-Za-z0-9]{30,}",
        ),
        _prefixed("github", ("github_pat_",), r"[A-Za-z0-9_]{40,}"),
        _prefixed(
            "gitlab",
            ("glpat-", "gldt-", "glrt-", "glptt-", "glcbt-", "glsoat-", "glffct-", "glimt-"),
            rf"{_BODY}{{20,}}",
        ),
        _prefixed(
            "stripe",
            ("sk_live_", "sk_test_", "rk_live_", "rk_test_", "pk_live_", "whsec_"),
            r"[A-Za-z0-9]{16,}",
        ),
        _prefixed("sk-key", ("sk-",), rf"{_BODY}{{20,}}"),
        _prefixed(
            "slack",
            ("xoxb-", "xoxa-", "xoxp-", "xoxo-", "xoxr-", "xoxs-", "xoxe-", "xapp-"),
            r"[A-Za-z0-9-]{11,}",
        ),
        attrs.evolve(
            _prefixed("slack", ("hooks.slack.com/services/",), r"[A-Za-z0-9/_-]{20,}"), alone=True
        ),
        _prefixed(
            "aws-key",
            (
                "AKIA",
                "ASIA",
                "ABIA",
                "ACCA",
                "AGPA",
                "AIDA",
                "AROA",
                "AIPA",
                "ANPA",
                "ANVA",
                "APKA",
            ),
            r"[A-Z0-9]{16}(?![A-Za-z0-9])",
        ),
        _prefixed("google-key", ("AIza",), rf"{_BODY}{{35}}"),
        _prefixed("google-oauth", ("ya29.",), r"[A-Za-z0-9_.-]{20,}", alone=True),
        _prefixed("google-oauth", ("GOCSPX-",), rf"{_BODY}{{20,}}"),
        _prefixed("npm", ("npm_",), r"[A-Za-z0-9]{36}"),
        _prefixed("huggingface", ("hf_",), r"[A-Za-z0-9]{30,}"),
        _prefixed("huggingface", ("api_org_",), r"[A-Za-z0-9]{30,}"),
        _prefixed("sendgrid", ("SG.",), r"[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}"),
        _prefixed("pypi", ("pypi-AgE",), rf"{_BODY}{{50,}}"),
        _prefixed("shopify", ("shpat_", "shpss_", "shpca_", "shppa_"), r"[A-Fa-f0-9]{32}"),
        _prefixed("digitalocean", ("dop_v1_", "doo_v1_", "dor_v1_"), r"[a-f0-9]{64}"),
        _prefixed("docker", ("dckr_pat_",), rf"{_BODY}{{20,}}"),
        _prefixed("vault", ("hvs.", "hvb."), rf"{_BODY}{{20,}}"),
        _prefixed("grafana", ("glsa_", "glc_"), r"[A-Za-z0-9_=+/]{30,}", alone=True),
        _prefixed("age", ("AGE-SECRET-KEY-1",), r"[A-Z0-9]{50,}"),
        _prefixed("postman", ("PMAK-",), r"[a-f0-9]{24}-[a-f0-9]{34}"),
        _prefixed("linear", ("lin_api_",), r"[A-Za-z0-9]{30,}"),
        _prefixed("newrelic", ("NRAK-",), r"[A-Z0-9]{27}"),
        _prefixed("databricks", ("dapi",), r"[a-f0-9]{32}(?![a-f0-9])"),
        _prefixed("atlassian", ("ATATT3",), rf"{_BODY}{{40,}}"),
        _prefixed("groq", ("gsk_",), r"[A-Za-z0-9]{40,}"),
        _prefixed("replicate", ("r8_",), r"[A-Za-z0-9]{30,}"),
        _prefixed("perplexity", ("pplx-",), r"[A-Za-z0-9]{40,}"),
        _prefixed("sentry", ("sntrys_", "sntryu_"), r"[A-Za-z0-9_=+/]{30,}", alone=True),
        _prefixed("tailscale", ("tskey-",), r"[A-Za-z0-9-]{20,}"),
        _prefixed("supabase", ("sbp_",), r"[a-f0-9]{40}"),
        _prefixed("planetscale", ("pscale_tkn_", "pscale_pw_"), rf"{_BODY}{{30,}}"),
        _prefixed("figma", ("figd_",), rf"{_BODY}{{30,}}"),
        _prefixed("notion", ("ntn_",), r"[A-Za-z0-9]{40,}"),
        _prefixed("contentful", ("CFPAT-",), rf"{_BODY}{{40,}}"),
        _prefixed("onepassword", ("ops_eyJ",), r"[A-Za-z0-9_=+/-]{30,}", alone=True),
        _prefixed("mailgun", ("key-",), r"[0-9a-f]{32}(?![0-9a-f])"),
        _prefixed("square", ("sq0atp-", "sq0csp-"), rf"{_BODY}{{22,}}"),
        _prefixed("twilio", ("SK",), r"[0-9a-f]{32}(?![0-9a-f])"),
        _prefixed("artifactory", ("AKCp",), r"[A-Za-z0-9]{60,}"),
        _prefixed("doppler", ("dp.pt.", "dp.st.", "dp.sa.", "dp.ct."), r"[A-Za-z0-9]{40,}"),
        _prefixed("dynatrace", ("dt0c01.",), r"[A-Z0-9]{24}\.[A-Z0-9]{64}"),
        _prefixed("easypost", ("EZAK", "EZTK"), r"[A-Za-z0-9]{54}"),
        _prefixed("flutterwave", ("FLWSECK-", "FLWSECK_TEST-"), r"[A-Za-z0-9]{32}"),
        _prefixed("frameio", ("fio-u-",), rf"{_BODY}{{40,}}"),
        _prefixed("pulumi", ("pul-",), r"[a-f0-9]{40}"),
        _prefixed("prefect", ("pnu_",), r"[A-Za-z0-9]{36}"),
        _prefixed("readme", ("rdme_",), r"[a-z0-9]{70}"),
        _prefixed("rubygems", ("rubygems_",), r"[a-f0-9]{48}"),
        _prefixed("sendinblue", ("xkeysib-",), r"[a-f0-9]{64}-[A-Za-z0-9]{16}"),
        _prefixed("shippo", ("shippo_live_", "shippo_test_"), r"[a-f0-9]{40}"),
        _prefixed("typeform", ("tfp_",), rf"{_BODY}{{40,}}"),
        _prefixed("clojars", ("CLOJARS_",), r"[a-z0-9]{60}"),
        _prefixed("alibaba", ("LTAI",), r"[A-Za-z0-9]{20}(?![A-Za-z0-9])"),
        _prefixed("flyio", ("FlyV1 fm2_",), r"[A-Za-z0-9+/=_-]{40,}", alone=True),
        _Rule(  # Terraform Cloud: ID.atlasv1.SECRET, the literal in the middle
            "terraform",
            ("atlasv1.",),
            r"(?<=[A-Za-z0-9]{14}\.)atlasv1\.(?P<s>[A-Za-z0-9_=-]{60,})",
            back=23,
        ),
        _Rule(  # Twilio: ACCOUNT_SID:AUTH_TOKEN, as curl -u and Basic credentials hold them
            "twilio",
            ("AC",),
            r"AC[0-9a-f]{32}:(?P<s>[0-9a-f]{32})(?![0-9A-Za-z])",
        ),
        *_context_rules(),
    )
