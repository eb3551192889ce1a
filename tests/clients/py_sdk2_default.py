"""Matrix driver: the official Python SDK 2.x ``Client`` as an agent framework makes it,
with no callbacks at all (no sampling, elicitation or roots handler: it declares nothing),
in its default ``mode="auto"`` (mcp==2.3.0, the main .venv).

    py_sdk2_default.py KIND stdio|http|sse TARGET...

The recording client of the matrix's plain-recording family: run with
``CASSETTE_MATRIX_STEPS=tools,echo,gated`` it connects, lists tools and calls them, as
every agent framework connects (tests/e2e/test_client_matrix.py). The steps are
py_sdk2.py's; see common.py for the output.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import Observer, Target, main
from py_sdk2 import run_script, transport

warnings.simplefilter("ignore")  # deprecations are not observations


async def session(target: Target, obs: Observer) -> None:
    from mcp import Client

    async with Client(transport(target), cache=None) as client:
        obs.connected = True
        obs.out["protocol"] = client.protocol_version
        info = client.server_info
        obs.out["server"] = None if info is None else {"name": info.name, "version": info.version}
        await run_script(client, target, obs)


if __name__ == "__main__":
    sys.exit(main(session))
