"""The break-even map of speed versus mistakes: ``python experiments/break_even.py [--quick]``.

The design is experiments/break_even.toml; the analysis is speedtrap.experiments.canonical.break_even.
"""

import sys

from speedtrap.experiments.canonical import main

if __name__ == "__main__":
    sys.exit(main("break_even"))
