"""`sessionledger config get|set|unset [--repo]`: read and change the settings (docs/design.md §7).

`get` shows the effective value and where it comes from — an environment variable beats the
repository's git config (`sessionledger.<key>`), which beats the file — so "why is /clear not
captured?" has a one-line answer. `set` checks the value against the key's type (the same rules
as the environment) before writing it; `--repo` writes it for this repository only.
"""

from __future__ import annotations

import argparse

from sessionledger import config as config_mod
from sessionledger.commands.common import CommandError, load_config, print_json


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("config", help="show or change settings (config file; SESSIONLEDGER_* env wins)")
    actions = parser.add_subparsers(title="actions", metavar="<action>")
    get = actions.add_parser("get", help="effective value(s) and their source")
    get.add_argument("key", nargs="?", help="one key (default: all)")
    get.add_argument("--json", action="store_true")
    get.set_defaults(func=run_get)
    put = actions.add_parser("set", help="write a value to the config file")
    put.add_argument("key")
    put.add_argument("value")
    put.add_argument("--repo", action="store_true", help="for this repository only (its .git/config)")
    put.set_defaults(func=run_set)
    unset = actions.add_parser("unset", help="remove a key from the config file (back to its default)")
    unset.add_argument("key")
    unset.add_argument("--repo", action="store_true", help="remove this repository's own value")
    unset.set_defaults(func=run_unset)
    parser.set_defaults(func=lambda options: run_get(argparse.Namespace(key=None, json=False)))


def _known(key: str) -> str:
    if key not in config_mod.DEFAULTS:
        raise CommandError(f"unknown setting {key!r}; known: {', '.join(sorted(config_mod.DEFAULTS))}")
    return key


def run_get(options: argparse.Namespace) -> int:
    config = load_config()
    keys = [_known(options.key)] if options.key else sorted(config_mod.DEFAULTS)
    if options.json:
        print_json({k: {"value": config_mod.shown(k, config[k]), "source": config.sources[k]} for k in keys})
    elif options.key:
        print(_text(config_mod.shown(options.key, config[options.key])))
        if config.sources[options.key] not in ("file", "default"):
            print(f"(from {config.sources[options.key]}, which overrides the config file)")
    else:
        for key in keys:
            print(f"{key} = {_text(config_mod.shown(key, config[key]))}  [{config.sources[key]}]")
    return 0


def run_set(options: argparse.Namespace) -> int:
    key = _known(options.key)
    try:
        value = config_mod.coerce(key, options.value, config_mod.DEFAULTS[key])
    except config_mod.ConfigError as exc:
        raise CommandError(str(exc).replace(config_mod.ENV_PREFIX + key.upper(), key)) from None
    if getattr(options, "repo", False):
        return _set_repo(key, value)
    path = config_mod.update_file(**{key: value})
    print(f"{key} = {_text(config_mod.shown(key, value))} in {path}")
    _warn_if_overridden(key)
    return 0


def run_unset(options: argparse.Namespace) -> int:
    key = _known(options.key)
    if getattr(options, "repo", False):
        _git_config(key, "--unset-all")
        print(f"{key} removed from this repository's git config")
        return 0
    path = config_mod.update_file(**{key: None})
    print(f"{key} removed from {path} (default: {_text(config_mod.DEFAULTS[key])})")
    _warn_if_overridden(key)
    return 0


def _set_repo(key: str, value: object) -> int:
    if key in config_mod.NOT_PER_REPO:
        raise CommandError(f"{key} is set for the whole machine, not per repository")
    _git_config(key, _text(value))
    print(f"{key} = {_text(value)} for this repository ({config_mod.git_name(key)} in its git config)")
    _warn_if_overridden(key)
    return 0


def _git_config(key: str, *args: str) -> None:
    import os

    from sessionledger import gitmeta, gitrefs

    repo = gitrefs.find_repo(os.getcwd())
    if repo is None:
        raise CommandError("--repo: not inside a git repository")
    name = config_mod.git_name(key)
    command = ("config", "--local", args[0], name) if args[0].startswith("--") else ("config", "--local", name, *args)
    try:
        gitmeta.git(repo.worktree, *command)
    except gitmeta.GitError as exc:
        if args[0] != "--unset-all":  # unsetting what is not set is fine
            raise CommandError(str(exc)) from None


def _warn_if_overridden(key: str) -> None:
    source = load_config().sources[key]
    if source.startswith(config_mod.ENV_PREFIX):
        print(f"Note: {source} is set and overrides it.")
    elif source.startswith("git config"):
        print(f"Note: this repository's {source.split()[-1]} overrides the config file here.")


def _text(value: object) -> str:
    import json

    return json.dumps(value) if isinstance(value, (bool, dict, list)) or value is None else str(value)
