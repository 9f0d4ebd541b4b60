"""``python -m dealerbox``: the ``dealerbox`` command."""

import sys

from dealerbox.cli import main

sys.exit(main())
