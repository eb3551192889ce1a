"""Matrix driver: the MCP Inspector's CLI mode (@modelcontextprotocol/inspector, pinned in
tests/node/package.json), run as ``inspector --cli`` like ``npx @modelcontextprotocol/inspector
--cli`` does.

    inspector_cli.py [--mode legacy|auto|modern] KIND stdio|http|sse TARGET...

The Inspector CLI runs ONE method per invocation, each its own session (connect, the method,
disconnect): this driver runs the scripted session as one invocation per step. Over stdio
every step starts the server command again, so a recording through ``cassette record``
needs ``--sessions DIR``. ``--mode`` is the CLI's ``--protocol-era`` (its default for an
ad-hoc target is legacy). The CLI declares no sampling, elicitation or roots capability,
so those three steps observe what the server does without them. Output as common.py;
"progress_updates", "callbacks" and "logs" stay empty (the CLI reports none of them). When
every step fails the same way, that is a failure to connect.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import ONLY, STEP_TIMEOUT, Observer, Target, emit, normalise, parse_args

NODE_DIR = Path(__file__).resolve().parent.parent / "node"
LAUNCHER = (
    NODE_DIR / "node_modules" / "@modelcontextprotocol" / "inspector" / "clients" / "launcher"
)
INSPECTOR = LAUNCHER / "build" / "index.js"


def invoke(target: Target, *method: str) -> Any:
    """One Inspector CLI session running METHOD: its result, or raises with its error."""
    if target.transport == "stdio":
        where = [stdio_wrapper(target.where)]
    else:
        where = ["--transport", target.transport, "--server-url", target.url]
    era = ["--protocol-era", target.mode] if target.mode else []
    argv = ["node", str(INSPECTOR), "--cli", "--format", "json", "-q", *era, *where, *method]
    # No catalog, OAuth store or client config of the developer's: a home of its own.
    home = os.environ.get("CASSETTE_MATRIX_HOME")
    env = {**os.environ, "HOME": home} if home else None
    try:
        proc = subprocess.run(
            argv,
            capture_output=True,
            text=True,
            timeout=STEP_TIMEOUT + 15,
            check=False,
            env=env,
        )
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"no answer in {STEP_TIMEOUT + 15:.0f}s") from None
    for stream in (proc.stdout, proc.stderr):
        for line in stream.splitlines():
            try:
                envelope = json.loads(line)
            except ValueError:
                continue
            if isinstance(envelope, dict) and "result" in envelope:
                return envelope["result"]
            if isinstance(envelope, dict) and "error" in envelope:
                error = envelope["error"]
                message = error.get("message") if isinstance(error, dict) else error
                raise RuntimeError(str(message).splitlines()[0])
    last = (proc.stderr.strip() or proc.stdout.strip() or "no output").splitlines()[-1]
    raise RuntimeError(f"exit {proc.returncode}: {last}")


def stdio_wrapper(command: list[str]) -> str:
    """COMMAND as one executable path: the Inspector's own options parser would take the
    server's (``-q``, ``-o``, ``--``) as its own."""
    import shlex
    import tempfile

    home = os.environ.get("CASSETTE_MATRIX_HOME")  # the run's own folder, when it has one
    folder = Path(tempfile.mkdtemp(prefix="inspector-target-", dir=home))
    script = folder / "server"
    script.write_text(f"#!/bin/sh\nexec {shlex.join(command)}\n", "utf-8")
    script.chmod(0o755)
    return str(script)


def tool(target: Target, call: dict[str, Any]) -> list[str]:
    args = json.dumps(call.get("arguments") or {})
    return ["--method", "tools/call", "--tool-name", call["name"], "--tool-args-json", args]


def prompt(call: dict[str, Any]) -> list[str]:
    pairs = [f"{k}={v}" for k, v in (call.get("arguments") or {}).items()]
    return ["--method", "prompts/get", "--prompt-name", call["name"]] + (
        ["--prompt-args", *pairs] if pairs else []
    )


def main() -> int:
    import anyio

    target = parse_args()
    spec = target.spec
    obs = Observer()

    def names(result: Any, attr: str, key: str) -> list[str]:
        return [str(item[key]) for item in result[attr]]

    steps: list[tuple[str, list[str], Any]] = [
        ("set_level", ["--method", "logging/setLevel", "--log-level", spec["log_level"]], None),
        ("tools", ["--method", "tools/list"], ("tools", "name")),
        ("resources", ["--method", "resources/list"], ("resources", "uri")),
        ("prompts", ["--method", "prompts/list"], ("prompts", "name")),
        ("echo", tool(target, spec["echo"]), None),
        ("progress", tool(target, spec["progress"]), None),
        ("prompt", prompt(spec["prompt"]), None),
        ("prompt_args", prompt(spec["prompt_args"]), None),
        ("read", ["--method", "resources/read", "--uri", spec["resource"]], None),
        ("sampling", tool(target, spec["sampling"]), None),
        ("elicitation", tool(target, spec["elicitation"]), None),
        ("roots", tool(target, spec["roots"]), None),
        *([("gated", tool(target, spec["gated"]), None)] if "gated" in spec else []),
    ]
    steps = [step for step in steps if not ONLY or step[0] in ONLY]

    async def run() -> None:
        for name, method, listed in steps:

            async def action(method: list[str] = method, listed: Any = listed) -> Any:
                result = await anyio.to_thread.run_sync(invoke, target, *method)
                return names(result, *listed) if listed else result

            await obs.step(name, action)
            if name == "progress":
                obs.out["progress_updates"] = []

    anyio.run(run)
    result = obs.finish()
    errors = {json.dumps(v) for k, v in obs.out.items() if isinstance(v, dict) and "error" in v}
    failed = [k for k, v in obs.out.items() if isinstance(v, dict) and "error" in v]
    if len(failed) == len(steps) and len(errors) == 1:
        emit({**result, "error": obs.out["tools"]["error"], "stage": "connect"})
        return 1
    emit(normalise(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
