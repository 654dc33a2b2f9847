"""``manage.py`` for an installed server (``pip install .``), which has no source tree:
``sessionledger-server migrate`` or ``python -m config migrate``."""

from __future__ import annotations

import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    from django.core.management import execute_from_command_line

    execute_from_command_line(["sessionledger-server", *sys.argv[1:]])


if __name__ == "__main__":
    main()
