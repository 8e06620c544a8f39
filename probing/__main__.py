"""``python -m probing``: see :mod:`probing.cli`."""

import sys

from probing.cli import main

sys.exit(main())
