"""The launcher the installed hooks run: `<python> -I -S <this file> hook <event>`.

A console script (pip's wrapper) imports `re` before it calls anything, and `site` reads every
`.pth` file of the environment: together about half the cost of an interpreter start, paid after
every Bash call. Here the interpreter starts isolated (`-I`: no PYTHON* variables, no user site, no
script directory on the path) and without `site` (`-S`); the directory holding this package is put
on the path by hand, so exactly the client (standard library only) is importable. Nothing is
imported here that the hook does not need: not even `os` (docs/client.md "Hooks that never hurt a
teammate").
"""

import sys


def _parent(path: str) -> str:
    return path[: max(path.rfind("/"), path.rfind("\\"))]


if __name__ == "__main__":
    sys.path.insert(0, _parent(_parent(__file__)))
    if sys.argv[1:2] == ["hook"]:  # what the installed hooks run: straight to it, not through `cli`
        from sessionledger.commands.hook import run_and_exit

        run_and_exit(sys.argv[2:])
    from sessionledger.cli import main

    sys.exit(main())
