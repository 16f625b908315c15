"""``python -m headspace``: the command line (``headspace.cli``)."""

import sys

from headspace.cli import main

sys.exit(main())
