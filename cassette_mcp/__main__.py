"""``python -m cassette_mcp``: the command line, checked as the ``cassette`` script is
(``python -m cassette`` cannot be, when another package owns the name)."""

import sys

from cassette_mcp import main

sys.exit(main())
