"""``python -m dskit``: the same as the ``dskit`` command."""

from dskit.tooling.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
