"""The one version of Sessionledger: the server, the API document, the client and the image agree on it.

Both pyproject.toml files read it from here (hatch's version source); bump it here only, with a
CHANGELOG.md entry.
"""

__version__ = "0.1.0"
