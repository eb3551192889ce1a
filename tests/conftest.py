"""Suite-wide settings: Hypothesis runs without per-example deadlines, because CI machines
are shared and noisy and no test here may depend on timing to pass."""

import os

from hypothesis import settings

settings.register_profile("cassette", deadline=None, print_blob=True)
# The longer fuzz run of docs/reliability.md: CASSETTE_FUZZ=1 pytest tests/unit -k hostile
settings.register_profile("fuzz", deadline=None, print_blob=True, max_examples=20_000)
settings.load_profile("fuzz" if os.environ.get("CASSETTE_FUZZ") else "cassette")

# pytester drives the pytest plugin black-box (tests/plugin). pytest accepts
# ``pytest_plugins`` only in a top-level conftest, so it is enabled here.
pytest_plugins = ["pytester"]

# A developer's or CI's record mode must not change what this suite's own commands do;
# the tests that are about MCP_CASSETTE_MODE set it themselves.
os.environ.pop("MCP_CASSETTE_MODE", None)
