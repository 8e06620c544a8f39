"""``python -m probing``: see :mod:`probing.cli.main`."""

import sys

from probing.cli.main import main

sys.exit(main())
