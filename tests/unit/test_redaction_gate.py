"""The one redaction gate (``cassette.store.gate``): the only place a policy is built, the
rules checked before anything is recorded, and a joined cassette never losing a rule.

An AST scan of every module of ``cassette`` finds no other code that builds a policy
(``Redactor(...)``, ``Redactor.configured``, ``.from_header``, ``.with_literals``, a
throwaway ``redact_text``/``redact_argv``) outside the gate and the redactor itself.
Two exemptions, each for a reason a reader can check:

* ``cassette/core/replay/shown.py`` (how a replay session shows live messages): the sans-IO
  core cannot read project settings; the runtime hands it the gate's policy
  (``ReplayPool(shown=...)``), and only a library caller's ``Replayer`` built without
  one falls back to the built-in rules and the header's variables to describe a miss
  (which passes the gate again where the runtime prints it,
  ``cassette.runtime.conversation``);
* the transports (``cassette/transports/``) may not import the store; they redact an
  upstream URL in an error message with the built-in rules (its credentials and secret
  query parameters are what those find).
"""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any, Final

import pytest

from cassette.core.redaction.redacted import check_header, pattern_digest
from cassette.errors import UsageError
from cassette.store.gate import (
    RedactOptions,
    RuleMissing,
    check_rules,
    joined,
    policy,
    scan_policy,
    shown,
)

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "cassette"
_BUILDERS: Final = frozenset({"configured", "from_header", "with_literals"})
_THROWAWAY: Final = frozenset({"redact_text", "redact_argv"})
_ALLOWED: Final = ("cassette/core/redaction/redactor.py", "cassette/store/gate.py")
_EXEMPT: Final = ("cassette/core/replay/shown.py", "cassette/transports/")


def _builders(tree: ast.AST) -> list[tuple[int, str]]:
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if (isinstance(func, ast.Name) and func.id in {"Redactor", "RedactionSession"}) or (
            isinstance(func, ast.Name) and func.id in _THROWAWAY
        ):
            found.append((node.lineno, func.id))
        elif isinstance(func, ast.Attribute) and func.attr in _BUILDERS | _THROWAWAY:
            found.append((node.lineno, func.attr))
    return found


def test_no_module_but_the_gate_builds_a_redaction_policy() -> None:
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        where = path.relative_to(ROOT).as_posix()
        if where in _ALLOWED or where.startswith(_EXEMPT):
            continue
        offenders += [
            f"{where}:{line}: {name}"
            for line, name in _builders(ast.parse(path.read_text(encoding="utf-8")))
        ]
    assert offenders == []


def test_the_scan_sees_a_builder() -> None:
    tree = ast.parse("Redactor(paths=('/x',))\nr.with_literals(['v'])\nredact_text(t)\n")
    assert [name for _, name in _builders(tree)] == ["Redactor", "with_literals", "redact_text"]


# -- settings checked before anything is recorded ----------------------------------------


@pytest.mark.parametrize(
    ("options", "words"),
    [
        (RedactOptions(paths=("params/arguments/x",)), "'/params/arguments/x'"),
        (RedactOptions(env=("$NAME",)), "'NAME'"),
        (RedactOptions(env=("${NAME}",)), "'NAME'"),
        (RedactOptions(patterns=("(",)), "not a regular expression"),
    ],
)
def test_a_bad_rule_on_the_command_line_is_one_line(options: RedactOptions, words: str) -> None:
    with pytest.raises(UsageError) as caught:
        policy(options, settings={}, environ={})
    message = str(caught.value)
    assert "\n" not in message
    assert words in message
    assert "--redact-" in message


@pytest.mark.parametrize(
    ("toml", "words"),
    [
        ('paths = ["params/x"]', "not a JSON Pointer"),
        ('env = ["$TOKEN"]', "'TOKEN'"),
        ('patterns = ["("]', "not a regular expression"),
    ],
)
def test_a_bad_rule_in_the_project_names_the_file(tmp_path: Path, toml: str, words: str) -> None:
    (tmp_path / "pyproject.toml").write_text(f"[tool.cassette.redact]\n{toml}\n")
    with pytest.raises(UsageError) as caught:
        policy(start=tmp_path, environ={})
    message = str(caught.value)
    assert "\n" not in message
    assert words in message
    assert "pyproject.toml" in message
    assert "[tool.cassette.redact]" in message


def test_check_rules_accepts_good_rules() -> None:
    check_rules(["acct-[0-9]{6}"], ["/params/arguments/note", ""], ["MY_TOKEN"], where="x")


# -- the policy's four sources ------------------------------------------------------------


def test_project_settings_and_options_and_environment_make_one_policy(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.cassette.redact]\npatterns = ["acct-[0-9]{6}"]\nenv = ["NOTE"]\n'
    )
    found = policy(
        RedactOptions(patterns=("emp-[0-9]{4}",), paths=("/params/who",)),
        start=tmp_path,
        environ={"NOTE": "correct horse battery", "GITHUB_TOKEN": "fake-value-1234"},
    )
    assert found is not None
    assert found.patterns == ("acct-[0-9]{6}", "emp-[0-9]{4}")
    text = found.session().text("acct-123456 emp-0042 correct horse battery fake-value-1234")
    for secret in ("acct-123456", "emp-0042", "correct horse battery", "fake-value-1234"):
        assert secret not in text
    described = found.describe()
    assert described["digests"] == [pattern_digest(p) for p in found.patterns]
    assert check_header(described) == []


def test_off_by_option_or_by_project() -> None:
    assert policy(RedactOptions(enabled=False), settings={}) is None
    assert policy(settings={"redact": False}) is None


# -- joining a cassette keeps its rules ---------------------------------------------------


def _header(patterns: tuple[str, ...] = ("acct-[0-9]{6}",)) -> dict[str, Any]:
    base = policy(RedactOptions(patterns=patterns, paths=("/params/arguments/who",)), settings={})
    assert base is not None
    return json.loads(json.dumps(base.describe()))


def test_joining_refuses_in_one_line_when_a_pattern_is_gone(tmp_path: Path) -> None:
    header = _header()
    with pytest.raises(RuleMissing) as caught:
        joined(policy(settings={}, environ={}), header)
    message = str(caught.value)
    assert "\n" not in message
    assert "acct-[0-9]{6}" in message
    assert "--redact-pattern" in message


def test_joining_with_the_rules_given_again_keeps_them_and_the_headers_paths() -> None:
    header = _header()
    base = policy(RedactOptions(patterns=("acct-[0-9]{6}",)), settings={}, environ={})
    extended = joined(base, header)
    assert extended is not None
    assert "/params/arguments/who" in extended.paths
    session = extended.session()
    message = {"params": {"arguments": {"who": "ada lovelace", "note": "acct-123456"}}}
    out, _ = session.message(message)
    assert "ada lovelace" not in json.dumps(out)
    assert "acct-123456" not in json.dumps(out)


def test_joining_with_redaction_off_still_redacts(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.cassette]\nredact = false\n")
    extended = joined(None, _header(patterns=()), start=tmp_path)
    assert extended is not None
    assert "/params/arguments/who" in extended.paths


def test_the_header_text_is_never_compiled() -> None:
    header = {"placeholders": "random", "patterns": ["("], "digests": [pattern_digest("(")]}
    with pytest.raises(RuleMissing):  # refused by digest; "(" would not even compile
        joined(policy(settings={}, environ={}), header)


def test_an_unredacted_cassette_is_joined_as_it_is() -> None:
    assert joined(policy(settings={}), None) is None


def test_a_malformed_digest_is_a_header_problem() -> None:
    assert check_header({"digests": ["md5:abc"]}) != []
    assert check_header({"digests": [pattern_digest("x")]}) == []


# -- printing ------------------------------------------------------------------------------


def test_shown_uses_the_projects_rules(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.cassette.redact]\npatterns = ["acct-[0-9]{6}"]\n'
    )
    monkeypatch.chdir(tmp_path)
    assert "acct-123456" not in shown("no recording of tools/call with acct-123456")


def test_scan_policy_ignores_this_machines_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOME_API_TOKEN", "fake-machine-value-77")
    found = scan_policy({"placeholders": "random", "paths": ["/params/x"]})
    assert "fake-machine-value-77" not in found.literals
    assert found.paths == ("/params/x",)


# -- the before_record hook -----------------------------------------------------------------


def _raises(message: dict[str, Any], direction: str) -> dict[str, Any]:
    raise KeyError(message["params"]["secret"])


def test_a_failing_hook_is_one_line_naming_it_with_its_text_redacted() -> None:
    from cassette.core.recording.hooks import HookError, call_hook

    token = "ghp_" + "Qx7" * 12
    with pytest.raises(HookError) as caught:
        call_hook(
            _raises,
            {"params": {"secret": token}},
            "c2s",
            policy(settings={}, environ={}).session().text,
        )  # type: ignore[arg-type,union-attr]
    message = str(caught.value)
    assert "\n" not in message
    assert "test_redaction_gate:_raises" in message
    assert token not in message


@pytest.mark.parametrize("returned", [[1], "text", {"n": float("nan")}, {"x": object()}])
def test_what_a_hook_returns_is_checked_before_it_is_written(returned: Any) -> None:
    from cassette.core.recording.hooks import HookError, call_hook

    with pytest.raises(HookError, match="before_record hook"):
        call_hook(lambda _m, _d: returned, {"id": 1}, "c2s")


def test_a_hook_may_drop_or_change_a_message() -> None:
    from cassette.core.recording.hooks import call_hook

    assert call_hook(lambda _m, _d: None, {"id": 1}, "c2s") is None
    assert call_hook(lambda m, _d: {**m, "x": 1}, {"id": 1}, "c2s") == {"id": 1, "x": 1}
