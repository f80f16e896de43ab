"""``python -m bai_lib``: the command line of :mod:`bai_lib.cli`."""

import sys

from .cli import main

sys.exit(main())
