"""`benchmarks` is a folder of the repository, not an installed package: importable from its root only."""

import sys
from pathlib import Path

ROOT = str(Path(__file__).resolve().parents[2])
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)
