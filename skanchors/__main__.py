"""``python -m skanchors`` runs the command line (see :mod:`skanchors.cli`)."""

import sys

from .cli import main

sys.exit(main())
