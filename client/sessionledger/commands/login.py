"""`sessionledger login`: get an API token without pasting secrets (device flow), or store one.

Device flow (RFC 8628's shape): `POST /api/v1/auth/device` gives a user code and an approval
page; the browser approves; `POST /api/v1/auth/device/token` answers 428 until then, and the
token exactly once. `--token` is for CI and scripts (checked against the server before saving).
"""

from __future__ import annotations

import argparse
import socket
import sys
import time

from sessionledger import config as config_mod
from sessionledger.api import ApiError, Client
from sessionledger.commands.common import CommandError, api_error, load_config


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("login", help="log in to the server (device flow, or --token)")
    parser.add_argument("--server", help="server URL, e.g. https://sessionledger.example.com")
    parser.add_argument("--token", help="store this API token instead of logging in through the browser")
    parser.add_argument("--no-browser", action="store_true", help="print the approval URL, do not open it")
    parser.set_defaults(func=run)


def run(options: argparse.Namespace) -> int:
    config = load_config()
    server = (options.server or config.server).rstrip("/")
    if not server:
        raise CommandError("which server? `sessionledger login --server https://…`")
    client = Client(server, timeout=float(config["command_timeout"]))
    token = options.token or _device_flow(client, open_browser=not options.no_browser)
    who = _check(Client(server, token, timeout=float(config["command_timeout"])))
    path = config_mod.update_file(server=server, token=token)
    print(f"Logged in to {server}{who}. Token saved in {path}.")
    if config.sources.get("token", "").startswith(config_mod.ENV_PREFIX):
        print("Note: SESSIONLEDGER_TOKEN is set and takes precedence over the saved token.")
    return 0


def _check(client: Client) -> str:
    """Verify the token by listing projects; returns a short description for the message."""
    try:
        projects = client.get("/projects") or []
    except ApiError as exc:
        raise api_error(exc) from None
    return f" ({len(projects)} project{'s' if len(projects) != 1 else ''})"


def _device_flow(client: Client, *, open_browser: bool) -> str:
    try:
        grant = client.post_json("/auth/device", {"client_name": socket.gethostname()[:100]})
    except ApiError as exc:
        raise api_error(exc) from None
    url = grant.get("verification_uri_complete") or grant["verification_uri"]
    print(f"To log in, open {url}\nand confirm the code {grant['user_code']}.", flush=True)
    if open_browser:
        _open(url)
    return _poll(client, grant)


def _open(url: str) -> None:
    try:
        import webbrowser

        webbrowser.open(url, new=2)
    except Exception:
        pass


def _poll(client: Client, grant: dict) -> str:
    interval = max(1.0, float(grant.get("interval") or 2))
    deadline = time.monotonic() + float(grant.get("expires_in") or 600)
    print("Waiting for approval…", end="", flush=True, file=sys.stderr)
    while time.monotonic() < deadline:
        time.sleep(interval)
        try:
            reply = client.post_json("/auth/device/token", {"device_code": grant["device_code"]})
        except ApiError as exc:
            interval = _pending_or_raise(exc, interval)
            continue
        print(" approved.", file=sys.stderr)
        return str(reply["token"])
    raise CommandError("the sign-in code expired; run `sessionledger login` again")


def _pending_or_raise(exc: ApiError, interval: float) -> float:
    """The next polling interval while the login is pending; CommandError when it failed."""
    if exc.code == "authorization_pending" or exc.transient:
        return interval
    if exc.code == "slow_down":
        return interval + 5
    print(file=sys.stderr)
    if exc.code == "access_denied":
        raise CommandError("the sign-in was denied in the browser")
    raise CommandError(f"{exc.message}")
