"""API token secrets: generation and hashing.

Secrets look like ``slp_<43 url-safe chars>`` so secret scanners and people recognise them;
only their SHA-256 is stored, which is enough because they carry 256 bits of entropy.
"""

from __future__ import annotations

import hashlib
import secrets
from datetime import datetime, timedelta

from django.conf import settings

TOKEN_PREFIX = "slp_"
DISPLAY_PREFIX_LENGTH = 12


def new_secret() -> str:
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


def hash_secret(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def display_prefix(secret: str) -> str:
    return secret[:DISPLAY_PREFIX_LENGTH]


def longest_expiry(created_at: datetime) -> datetime | None:
    """When a token created at ``created_at`` must have expired under SESSIONLEDGER_TOKEN_MAX_DAYS (None: no
    cap). Applied both at creation and at each use, so lowering the cap also reaches tokens that exist."""
    days = settings.SESSIONLEDGER_TOKEN_MAX_DAYS
    return created_at + timedelta(days=days) if days else None
