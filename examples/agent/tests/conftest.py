"""The agent module sits one folder up, as it would in a project of its own."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
