"""``python -m speedtrap``: the same as the ``speedtrap`` command."""

from speedtrap.cli import main

if __name__ == "__main__":
    main()
