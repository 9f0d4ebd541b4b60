"""``python -m dealerbox``: the ``dealerbox`` command."""

import sys

from .cli import main

sys.exit(main())
