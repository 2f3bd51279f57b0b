"""Fast-mode adoption on a shared fleet: ``python experiments/fast_mode_externality.py [--quick]``.

The design is experiments/fast_mode_externality.toml; the analysis is
speedtrap.experiments.canonical.fast_mode_externality.
"""

import sys

from speedtrap.experiments.canonical import main

if __name__ == "__main__":
    sys.exit(main("fast_mode_externality"))
