"""`python -m sessionledger …` — the same entry point as the `sessionledger` script."""

import sys

from sessionledger.cli import main

sys.exit(main())
