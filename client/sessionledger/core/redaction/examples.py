"""Expand the rules' true/false-positive example templates into concrete strings.

The rules data holds no literal token (a secret scanner run on this repository must stay quiet,
and a generated value never matches a real account): an example is a template such as
`export GITHUB_TOKEN=«ghp_{alnum:36}»`, where `{class:n}` is n random characters of a class and
`«…»` marks the secret that must disappear. `{{` and `}}` are literal braces.

Classes: alnum, alpha, lower, upper, digits, hex, HEX, lowalnum, upalnum, b32 (A-Z2-7), b64, b64url,
token (alnum plus `_-`), symbols (a password alphabet), bech32 (upper case), crypt (crypt(3)'s
`./0-9A-Za-z`); `{uuid}`, `{jwt}`, `{password}`, `{basic:user}` (base64 of `user:<random>`),
`{pem:LABEL}` (a PEM block `-----BEGIN LABEL-----`).
Random classes with upper, lower and digits always contain one of each, as real keys do.
"""

from __future__ import annotations

import base64
import json
import random
import re
import string
import uuid
from dataclasses import dataclass

SECRET_OPEN, SECRET_CLOSE = "«", "»"
_CLASSES = {
    "alnum": string.ascii_letters + string.digits,
    "alpha": string.ascii_letters,
    "lower": string.ascii_lowercase,
    "upper": string.ascii_uppercase,
    "digits": string.digits,
    "hex": "0123456789abcdef",
    "HEX": "0123456789ABCDEF",
    "lowalnum": string.ascii_lowercase + string.digits,
    "upalnum": string.ascii_uppercase + string.digits,
    "b32": string.ascii_uppercase + "234567",
    "b64": string.ascii_letters + string.digits + "+/",
    "b64url": string.ascii_letters + string.digits + "-_",
    "token": string.ascii_letters + string.digits + "-_",
    "symbols": string.ascii_letters + string.digits + "!#%^*-_=+.",
    "bech32": "qpzry9x8gf2tvdw0s3jn54khce6mua7l".upper(),
    "crypt": "./" + string.digits + string.ascii_uppercase + string.ascii_lowercase,  # crypt(3)'s base64
}
_FIELD_RE = re.compile(r"\{\{|\}\}|\{([a-zA-Z0-9]+)(?::([^{}]{1,64}))?\}")


@dataclass(frozen=True)
class Example:
    """An expanded example: the full text and the secrets in it (empty for a false positive)."""

    text: str
    secrets: tuple[str, ...]


def expand(template: str, rng: random.Random) -> Example:
    """Fill in a template; `«…»` spans become the example's secrets (markers removed)."""
    text = _FIELD_RE.sub(lambda m: _field(m, rng), template)
    secrets: list[str] = []
    out: list[str] = []
    rest = text
    while SECRET_OPEN in rest:
        before, _, after = rest.partition(SECRET_OPEN)
        secret, _, rest = after.partition(SECRET_CLOSE)
        out += (before, secret)
        secrets.append(secret)
    out.append(rest)
    return Example("".join(out), tuple(secrets))


def random_chars(rng: random.Random, alphabet: str, n: int) -> str:
    """n characters of `alphabet`; when it has them, at least one upper, one lower and one digit."""
    chars = [rng.choice(alphabet) for _ in range(n)]
    needed = [
        pool for pool in (string.ascii_uppercase, string.ascii_lowercase, string.digits) if set(pool) & set(alphabet)
    ]
    if len(needed) > 1 and n >= 2 * len(needed):
        for i, pool in enumerate(needed):
            chars[rng.randrange(i * n // len(needed), (i + 1) * n // len(needed))] = rng.choice(
                [c for c in pool if c in alphabet]
            )
    return "".join(chars)


def _field(match: re.Match[str], rng: random.Random) -> str:
    if match.group(0) in ("{{", "}}"):
        return match.group(0)[0]
    name, arg = match.group(1), match.group(2)
    if name in _CLASSES:
        return random_chars(rng, _CLASSES[name], int(arg or 16))
    maker = _MAKERS.get(name)
    if maker is None:
        raise ValueError(f"unknown example field {match.group(0)!r}")
    return maker(rng, arg or "")


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _jwt(rng: random.Random, _: str) -> str:
    header = _b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    payload = _b64url(json.dumps({"sub": str(rng.randrange(10**9)), "iat": 1767225600}).encode())
    return f"{header}.{payload}.{random_chars(rng, _CLASSES['b64url'], 43)}"


def _pem(rng: random.Random, label: str) -> str:
    label = label or "RSA PRIVATE KEY"
    body = [random_chars(rng, _CLASSES["b64"], 64) for _ in range(12)]
    body.append(random_chars(rng, _CLASSES["b64"], 36) + "==")
    return "\n".join([f"-----BEGIN {label}-----", *body, f"-----END {label}-----"])


def _password(rng: random.Random, _: str) -> str:
    return (
        random_chars(rng, string.ascii_letters + string.digits, 10) + rng.choice("!#%^*") + str(rng.randrange(10, 99))
    )


def _basic(rng: random.Random, user: str) -> str:
    secret = f"{user or 'admin'}:{random_chars(rng, _CLASSES['alnum'], 16)}"
    return base64.b64encode(secret.encode()).decode()


_MAKERS = {
    "uuid": lambda rng, _: str(uuid.UUID(int=rng.getrandbits(128), version=4)),
    "jwt": _jwt,
    "pem": _pem,
    "password": _password,
    "basic": _basic,
}
