"""Secrets in shapes nobody tuned the rules to: default OpenSSH keys, passwords holding words or
shell characters, provider tokens in URLs and CLI flags, structured files (Kubernetes Secrets).

Like test_redact_leaks.py, each test plants a generated secret the way it reaches a transcript and
checks that no copy survives, that every line is still JSON, and that placeholders stay as they are.
"""

from __future__ import annotations

import base64
import random
import string

import pytest

from sessionledger.core.redaction.examples import random_chars
from tests.client.test_redact_leaks import assert_gone, read_result, redact

RNG = random.Random(41)
ALNUM = string.ascii_letters + string.digits


def rand(n: int, alphabet: str = ALNUM) -> str:
    return random_chars(RNG, alphabet, n)


def openssh_key() -> str:
    """What `ssh-keygen -t ed25519 -N ''` writes: the unencrypted header is full of `AAAA` runs."""
    header = b"openssh-key-v1\0\0\0\0\x04none\0\0\0\x04none\0\0\0\0\0\0\0\x01\0\0\0\x33\0\0\0\x0bssh-ed25519\0\0\0 "
    body = base64.b64encode(header + RNG.randbytes(300)).decode()
    lines = [body[i : i + 70] for i in range(0, len(body), 70)]
    return "\n".join(["-----BEGIN OPENSSH PRIVATE KEY-----", *lines, "-----END OPENSSH PRIVATE KEY-----"])


# --- vetoes apply to whole placeholders only ---------------------------------------------------


def test_unencrypted_openssh_key_is_redacted() -> None:
    key = openssh_key()
    assert_gone(read_result(f"# id_ed25519\n{key}\n"), key, kind="private_key")


@pytest.mark.parametrize(
    "secret",
    [
        lambda: "SampleTeam#2024",
        lambda: "example" + rand(20),
        lambda: "FakeNews" + rand(6) + "!",
        lambda: "$" + rand(20),
    ],
    ids=["sample", "example-prefix", "fake", "dollar-start"],
)
def test_password_holding_a_placeholder_word_is_redacted(secret: object) -> None:
    value = secret()  # type: ignore[operator]
    assert_gone(read_result(f"APP=shop\nDB_PASSWORD={value}\nLOG_LEVEL=info"), value, kind="password")


@pytest.mark.parametrize(
    "line",
    [
        "DB_PASSWORD=<your-password>",
        "API_TOKEN=${API_TOKEN}",
        "DB_PASSWORD=$DB_PASSWORD",
        "DB_PASSWORD=changeme",
        "API_TOKEN=xxxxxxxxxxxxxxxxxxxx",
        "API_TOKEN=your_api_token_here",
        "aws_access_key_id = AKIAIOSFODNN7EXAMPLE",
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "url = postgres://app:${DB_PASSWORD}@db:5432/app",
    ],
)
def test_whole_placeholder_is_left_alone(line: str) -> None:
    data = read_result(f"# settings\n{line}\n")
    assert redact(data).data == data
