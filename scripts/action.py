"""The steps of the GitHub Action (action.yml), here so they run and are tested anywhere.

    python action.py install    install cassette-mcp (INPUT_VERSION, else the action's checkout)
    python action.py test       run INPUT_RUN with MCP_CASSETTE_MODE=none (replay only)
    python action.py verify     cassette verify each cassette under INPUT_VERIFY against
                                INPUT_SERVER (a command line) or INPUT_UPSTREAM (a URL)
    python action.py scan       cassette redact --scan each cassette under INPUT_SCAN: the
                                secrets it finds and the suspects no one has reviewed

``test`` and ``verify`` write a Markdown job summary to ``$GITHUB_STEP_SUMMARY`` (misses:
requests a replay had no recording for; changes: answers the live server gives differently)
and ``misses=N`` / ``changed=N`` (``secrets=N`` / ``suspects=N`` for ``scan``) to
``$GITHUB_OUTPUT``; each exits with the failure it
found (the tests' exit code; 1 for drift). Standard library only: it runs before the
package is installed. Outside GitHub (no such variables) it prints the summary instead.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

ACTION_ROOT = Path(__file__).resolve().parent.parent
#: How the command line and the pytest plugin announce misses, each listed after it as
#: an indented "- ..." line.
MISSES = re.compile(r"(\d+) request\(s\) had no recording")
MOST_LINES = 50


def _input(name: str) -> str:
    return os.environ.get(f"INPUT_{name.upper()}", "").strip()


def _append(variable: str, text: str) -> None:
    target = os.environ.get(variable)
    if target:
        with open(target, "a", encoding="utf-8") as file:
            file.write(text)
    elif variable == "GITHUB_STEP_SUMMARY":
        sys.stdout.write(text)


def _fence(lines: list[str]) -> str:
    body = "\n".join(line.replace("```", "`\u200b``") for line in lines[:MOST_LINES])
    more = f"\n... {len(lines) - MOST_LINES} more" if len(lines) > MOST_LINES else ""
    return f"```text\n{body}{more}\n```\n"


def install() -> int:
    version = _input("version")
    spec = f"cassette-mcp[http]=={version}" if version else f"{ACTION_ROOT}[http]"
    pip = [sys.executable, "-m", "pip", "install", "--disable-pip-version-check", spec]
    return subprocess.run(pip, check=False).returncode


def test() -> int:
    command = _input("run")
    if not command:
        print(
            "action: the `run` input (the command that runs your tests) is empty", file=sys.stderr
        )
        return 2
    env = {**os.environ, "MCP_CASSETTE_MODE": "none"}
    done = subprocess.run(  # noqa: S602 - the workflow's own command line, as `run:` would
        command, shell=True, env=env, check=False, text=True, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )  # fmt: skip
    sys.stdout.write(done.stdout)
    lines = done.stdout.splitlines()
    count, misses = _misses(lines)
    sessions = [line for line in lines if line.startswith("mcp-cassette: sessions:")]
    verdict = "passed" if done.returncode == 0 else f"failed (exit {done.returncode})"
    parts = [f"## MCP cassettes: replay only\n\n`{command}` {verdict}.\n\n"]
    parts += [f"{line}\n\n" for line in sessions]
    if count:
        parts.append(f"**{count} miss(es)**: requests no cassette had a recording for\n\n")
        parts.append(_fence(misses))
        parts.append(
            "\nRecord them again (`--mode new_episodes` or `all`) and commit the cassettes.\n"
        )
    else:
        parts.append("No misses.\n")
    _append("GITHUB_STEP_SUMMARY", "".join(parts))
    _append("GITHUB_OUTPUT", f"misses={count}\nchanged=0\n")
    return done.returncode


def _misses(lines: list[str]) -> tuple[int, list[str]]:
    """How many misses the output announced, and the lines that list them."""
    count, listed, inside = 0, [], False
    for line in lines:
        found = MISSES.search(line)
        if found:
            count += int(found.group(1))
            inside = True
            listed.append(line)
        elif inside and line.startswith((" ", "\t")):
            listed.append(line)
        else:
            inside = False
    return count, listed


def _json_reports(
    tapes: list[Path], command: list[str], after: list[str]
) -> tuple[list[tuple[Path, Any, str]], int]:
    """``cassette COMMAND TAPE --format json AFTER...`` on each tape: (the tape, its report
    or ``None``, the last line of its stderr) each, and the worst exit code."""
    out, worst = [], 0
    for tape in tapes:
        argv = [sys.executable, "-m", "cassette", *command, str(tape), "--format", "json"]
        done = subprocess.run([*argv, *after], check=False, text=True, capture_output=True)
        sys.stderr.write(done.stderr)
        worst = max(worst, done.returncode)
        error = " ".join(done.stderr.strip().splitlines()[-1:])
        try:
            out.append((tape, json.loads(done.stdout), error))
        except ValueError:
            out.append((tape, None, error))
    return out, worst


def verify() -> int:
    folder = _input("verify")
    server, upstream = _input("server"), _input("upstream")
    if not folder or not (server or upstream):
        print(
            "action: verify needs `verify` (a folder) and `server` or `upstream`", file=sys.stderr
        )
        return 2
    target = ["--upstream", upstream] if upstream else ["--", *shlex.split(server)]
    tapes = sorted(Path(folder).rglob("*.jsonl"))
    rows, details, changed = [], [], 0
    reports, worst = _json_reports(tapes, ["verify"], target)
    for tape, report, error in reports:
        if report is None:
            rows.append(f"| `{tape}` | error | {error} |")
            continue
        drift = [r for r in report["requests"] if r["status"] != "MATCH"]
        changed += len(drift)
        matched = len(report["requests"]) - len(drift)
        rows.append(f"| `{tape}` | {matched} match | {len(drift)} drifted |")
        for request in drift:
            paths = ", ".join(p["path"] for p in request["paths"]) or request["detail"]
            details.append(
                f"{tape}:{request['line']}: {request['status']} {request['request']} {paths}"
            )
    parts = [f"## MCP cassettes: verify {folder}\n\n"]
    if not tapes:
        parts.append("No cassettes (`*.jsonl`) found.\n")
    else:
        parts.append("| cassette | matched | drift |\n|---|---|---|\n" + "\n".join(rows) + "\n\n")
        parts.append(_fence(details) if details else "Every answer matches its recording.\n")
    _append("GITHUB_STEP_SUMMARY", "".join(parts))
    _append("GITHUB_OUTPUT", f"misses=0\nchanged={changed}\n")
    return worst


def scan() -> int:
    folder = _input("scan")
    if not folder:
        print("action: scan needs `scan` (a folder of cassettes)", file=sys.stderr)
        return 2
    tapes = sorted(Path(folder).rglob("*.jsonl"))
    lines, secrets, suspects = [], 0, 0
    reports, worst = _json_reports(tapes, ["redact", "--scan"], [])
    for tape, report, error in reports:
        if report is None:
            lines.append(f"{tape}: {error}")
            continue
        secrets += len(report["secrets"])
        suspects += len(report["suspects"])
        lines += [f"{tape}:{f['line']}: {f['message']}" for f in report["secrets"]]
        lines += [f"{tape}:{f['line']}: {f['message']}" for f in report["suspects"]]
    parts = [f"## MCP cassettes: scan {folder}\n\n"]
    if not tapes:
        parts.append("No cassettes (`*.jsonl`) found.\n")
    elif lines:
        parts.append(
            f"**{secrets} secret(s), {suspects} suspect(s)** in {len(tapes)} cassette(s)\n\n"
        )
        parts.append(_fence(lines))
        parts.append(
            "\nRedact them (`cassette redact TAPE -o OUT`), or list a suspect that is no "
            "secret as reviewed in `[tool.cassette.redact]`.\n"
        )
    else:
        parts.append(f"No secret and no suspect in {len(tapes)} cassette(s).\n")
    _append("GITHUB_STEP_SUMMARY", "".join(parts))
    _append("GITHUB_OUTPUT", f"secrets={secrets}\nsuspects={suspects}\n")
    return worst


def main(argv: list[str]) -> int:
    steps = {"install": install, "test": test, "verify": verify, "scan": scan}
    if len(argv) != 1 or argv[0] not in steps:
        print(f"usage: action.py {{{'|'.join(steps)}}}", file=sys.stderr)
        return 2
    return steps[argv[0]]()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
