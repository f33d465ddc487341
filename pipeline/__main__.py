"""``python -m beambleu``: the ``beambleu`` command."""
import sys

from .cli import main

sys.exit(main())
