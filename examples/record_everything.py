"""Re-record examples/everything.jsonl from the pinned reference server.

    python examples/record_everything.py [OUTPUT]

Drives `@modelcontextprotocol/server-everything` (installed by `npm ci --prefix tests/node`)
through cassette-mcp's recording proxy with the library's harness API, one request at a
time, sending the same requests as examples/everything-requests.jsonl. The server path
is given relative to the repository root, so the cassette's header names no home folder.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import anyio

import cassette

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SERVER = "tests/node/node_modules/@modelcontextprotocol/server-everything/dist/index.js"


async def main(output: Path) -> None:
    requests = [json.loads(line) for line in (HERE / "everything-requests.jsonl").open()]
    os.chdir(ROOT)
    async with cassette.open_recording(["node", SERVER, "stdio"], output, overwrite=True) as server:
        for message in requests:
            if "id" in message:
                reply = await server.request(message["method"], message.get("params"))
                assert "result" in reply, reply
            else:
                await server.notify(message["method"], message.get("params"))
    print(f"recorded {output}", file=sys.stderr)


if __name__ == "__main__":
    anyio.run(main, Path(sys.argv[1]).resolve() if len(sys.argv) > 1 else HERE / "everything.jsonl")
