"""Waiting versus fixing on the three backends: ``python experiments/headline.py [--quick]``.

The design is experiments/headline.toml; the analysis is speedtrap.experiments.canonical.headline.
"""

import sys

from speedtrap.experiments.canonical import main

if __name__ == "__main__":
    sys.exit(main("headline"))
