"""`sessionledger config get|set|unset`: read and change the config file (SPEC §7).

`get` shows the effective value and where it comes from — an environment variable beats the
file — so "why is /clear not captured?" has a one-line answer. `set` checks the value against
the key's type (the same rules as the environment) before writing it.
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
    put.set_defaults(func=run_set)
    unset = actions.add_parser("unset", help="remove a key from the config file (back to its default)")
    unset.add_argument("key")
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
    path = config_mod.update_file(**{key: value})
    print(f"{key} = {_text(config_mod.shown(key, value))} in {path}")
    _warn_if_overridden(key)
    return 0


def run_unset(options: argparse.Namespace) -> int:
    key = _known(options.key)
    path = config_mod.update_file(**{key: None})
    print(f"{key} removed from {path} (default: {_text(config_mod.DEFAULTS[key])})")
    _warn_if_overridden(key)
    return 0


def _warn_if_overridden(key: str) -> None:
    source = load_config().sources[key]
    if source not in ("file", "default"):
        print(f"Note: {source} is set and overrides the config file.")


def _text(value: object) -> str:
    import json

    return json.dumps(value) if isinstance(value, (bool, dict, list)) or value is None else str(value)
