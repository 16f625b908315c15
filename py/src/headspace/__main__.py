"""``python -m headspace``: the command line (``headspace.cli``)."""

import os
import sys

from headspace.cli import main

try:
    status = main()
    sys.stdout.flush()
except BrokenPipeError:
    # the reader stopped reading (`| head`): not our error, and no traceback; the rest goes nowhere
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    status = 1
sys.exit(status)
