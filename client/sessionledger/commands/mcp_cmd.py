"""`sessionledger mcp`: serve the MCP tools over stdio (see `sessionledger.mcp_server`), and what
`init --mcp` writes: the project-scoped `.mcp.json` entry that makes Claude Code start it.
"""

from __future__ import annotations

import argparse
import json
import os

from sessionledger.commands.common import CommandError, read_json_object
from sessionledger.fsutil import atomic_write

SERVER_NAME = "sessionledger"
SERVER_ENTRY = {"command": "sessionledger", "args": ["mcp"]}


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("mcp", help="run the MCP server (stdio) for search_sessions/get_session/get_context")
    parser.add_argument("--project", help="project slug (default: from the git remote)")
    parser.set_defaults(func=run)


def run(options: argparse.Namespace) -> int:
    try:
        from sessionledger import mcp_server

        mcp_server._sdk()
    except ImportError:
        raise CommandError("the MCP server needs the MCP SDK: pip install 'sessionledger[mcp]'") from None
    mcp_server.serve(project=options.project)
    return 0


def install_config(worktree: str) -> tuple[str, bool]:
    """Merge our server into `<worktree>/.mcp.json`; (path, changed). Other servers and keys stay."""
    path = os.path.join(worktree, ".mcp.json")
    data = read_json_object(path)
    servers = data.setdefault("mcpServers", {})
    if not isinstance(servers, dict):
        raise CommandError(f"{path}: `mcpServers` is not an object; fix it by hand first")
    current = servers.get(SERVER_NAME)
    wanted = {**current, **SERVER_ENTRY} if isinstance(current, dict) else dict(SERVER_ENTRY)
    if current == wanted and os.path.exists(path):
        return path, False
    servers[SERVER_NAME] = wanted
    atomic_write(path, (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode(), mode=0o644)
    return path, True
