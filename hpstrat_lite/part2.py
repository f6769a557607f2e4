"""``python -m hpstrat_book.necessity ...``: an alias of ``hpstrat tune ...`` (Part II's runs)."""
import sys

from .cli import main

if __name__ == "__main__":  # pragma: no cover
    sys.exit(main(["tune", *sys.argv[1:]]))
