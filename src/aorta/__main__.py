"""`python -m aorta` is the `aorta` command."""

from aorta.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
