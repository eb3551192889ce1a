"""``python -m cassette``."""

import sys

from cassette.cli import main

sys.exit(main())
