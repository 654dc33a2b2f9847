"""Configuration: `$XDG_CONFIG_HOME/sessionledger/config.json`, every key overridable per
repository (`git config sessionledger.<key>`, in the clone's `.git/config`, e.g. the project
`init --project` pins or how much context a session starts with) and by `SESSIONLEDGER_<KEY>`
in the environment (docs/client.md "Configuration"), so CI jobs and scripts need no file.

JSON rather than TOML: the standard library can read TOML but not write it, and `login`/`init`
write this file. Environment values are coerced to the type of the key's default; dict-valued
keys (`redaction`, `repos`) take JSON text. The file holds the API token, so it is created 0600.
"""

from __future__ import annotations

import json
import os
from typing import Any

from sessionledger import paths
from sessionledger.fsutil import atomic_write

ENV_PREFIX = "SESSIONLEDGER_"
DEFAULTS: dict[str, Any] = {
    "server": "",  # e.g. https://sessionledger.example.com
    "token": "",
    "project": "",  # pin one project slug for every repository (else resolved from the git remote)
    "repos": {},  # normalised git remote -> project slug, written by `init`
    "max_raw_bytes": 10 * 1024 * 1024,  # the server's limit; a 413 teaches the real one
    "image_threshold": 8192,  # inline base64 images larger than this are slimmed to a placeholder
    "redaction": {},  # {"disabled": [kinds], "extra": [{"kind", "pattern", "group", "min_entropy"}]}
    "upload_timeout": 120,  # seconds an upload request may take in all (docs/client.md "Deadlines")
    "resumable_threshold": 1024 * 1024,  # bodies of more bytes go in parts that survive a cut link
    "command_timeout": 10,  # seconds any other request of a command may take in all (status, init, list…)
    "uploader_max_seconds": 900,  # how long a detached uploader keeps retrying a server that is down
    "retry_base_seconds": 2,
    "retry_max_seconds": 300,
    "auto_checkpoint_on_clear": True,
    "auto_resume_on_start": True,
    "verify_before_clear": False,
    "context_budget": 2000,  # characters of the SessionStart digest (Claude Code inlines up to 10,000)
    "context_prompts": False,  # put teammates' prompts (their own words) into the SessionStart digest
    "context_timeout": 0.5,  # seconds the SessionStart hook waits for the server, all requests together
}
SECRET_KEYS = ("token",)
NOT_PER_REPO = ("token", "server")  # a secret has no place in .git/config; nor does the login's server
REPO_SECTION = "sessionledger"


class ConfigError(ValueError):
    """A config file or environment value that cannot be used; the message names the key."""


class Config:
    """Effective settings plus where each came from (`default`, `file` or the env variable)."""

    def __init__(self, values: dict[str, Any], sources: dict[str, str]) -> None:
        self.values = values
        self.sources = sources

    def __getitem__(self, key: str) -> Any:
        return self.values[key]

    def get(self, key: str, default: Any = None) -> Any:
        return self.values.get(key, default)

    @property
    def server(self) -> str:
        return str(self.values["server"]).rstrip("/")

    @property
    def token(self) -> str:
        return str(self.values["token"])


def load(cwd: str | None = None) -> Config:
    """Defaults, then the file, then the repository around `cwd` (if given), then the environment."""
    values, sources = dict(DEFAULTS), dict.fromkeys(DEFAULTS, "default")
    for key, value in read_file().items():
        values[key] = value
        sources[key] = "file"
    for key, value in (read_repo(cwd) if cwd else {}).items():
        values[key] = value
        sources[key] = f"git config {git_name(key)}"
    for key, default in DEFAULTS.items():
        name = ENV_PREFIX + key.upper()
        if name in os.environ:
            values[key] = coerce(key, os.environ[name], default)
            sources[key] = name
    return Config(values, sources)


def read_file() -> dict[str, Any]:
    path = paths.config_file()
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path} must hold a JSON object")
    return data


def git_name(key: str) -> str:
    """`context_budget` → `sessionledger.context-budget` (git allows no `_` in a variable name)."""
    return f"{REPO_SECTION}.{key.replace('_', '-')}"


def read_repo(cwd: str) -> dict[str, Any]:
    """This repository's `sessionledger.*` git config as typed values; {} outside a repository."""
    import subprocess

    try:
        out = subprocess.run(
            ["git", "config", "-z", "--get-regexp", rf"^{REPO_SECTION}\."],
            cwd=cwd,
            capture_output=True,
            timeout=5,
            check=False,
        ).stdout.decode("utf-8", "replace")
    except (OSError, subprocess.TimeoutExpired):
        return {}
    by_name = {git_name(key).lower(): key for key in DEFAULTS if key not in NOT_PER_REPO}
    values = {}
    for item in filter(None, out.split("\0")):
        name, _, text = item.partition("\n")
        key = by_name.get(name.lower())
        if key is not None:
            values[key] = coerce(key, text, DEFAULTS[key], label=name)
    return values


def coerce(key: str, text: str, default: Any, *, label: str | None = None) -> Any:
    """An environment (or git config) string as the type of the key's default."""
    name = label or f"{ENV_PREFIX}{key.upper()}"
    if isinstance(default, bool):
        return _boolean(name, text)
    if isinstance(default, int | float):
        kind, what = (float, "a number") if isinstance(default, float) else (int, "a whole number")
        try:
            return kind(text)
        except ValueError:
            raise ConfigError(f"{name}: expected {what}, got {text!r}") from None
    if isinstance(default, dict):
        return _object(name, text)
    return text


def _boolean(name: str, text: str) -> bool:
    lowered = text.strip().lower()
    if lowered in ("1", "true", "yes", "on"):
        return True
    if lowered in ("0", "false", "no", "off", ""):
        return False
    raise ConfigError(f"{name}: expected a boolean, got {text!r}")


def _object(name: str, text: str) -> dict:
    try:
        value = json.loads(text) if text.strip() else {}
    except ValueError:
        raise ConfigError(f"{name}: expected a JSON object") from None
    if not isinstance(value, dict):
        raise ConfigError(f"{name}: expected a JSON object")
    return value


def update_file(**changes: Any) -> str:
    """Merge `changes` into the config file (keys set to None are removed); returns its path."""
    data = read_file()
    for key, value in changes.items():
        if value is None:
            data.pop(key, None)
        else:
            data[key] = value
    path = paths.config_file()
    atomic_write(path, (json.dumps(data, indent=2, sort_keys=True) + "\n").encode(), mode=0o600)
    return path


def shown(key: str, value: Any) -> Any:
    """A value as `status` may print it: secrets reduced to their prefix."""
    if key in SECRET_KEYS and value:
        return str(value)[:8] + "…"
    return value
