"""The provider catalogues: gitleaks' default rules (MIT), built into `catalogue/gitleaks.json`, and
the provider names of Kingfisher's rules (Apache-2.0), in `catalogue/kingfisher-providers.json`.

tools/redaction_catalogue.py translates the pinned release's RE2 patterns to Python once (re2.py);
here each entry becomes a `Rule` the engine runs like its own: anchored on the merged scans
(scans.py) by its keywords or its pattern's literal prefixes, so hundreds of rules add no pass
over the text; a rule no keyword can anchor on those scans is left out (`unanchored()`), and
the keyword-near-token rule (rules_data.py) covers its shape. A match passes gitleaks' own
checks (entropy, the rule's and the global allowlists) and our whole-placeholder veto.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

from .re2 import JSON_BOUNDARY
from .rules import FRAGMENTS, Rule
from .validators import placeholder, shannon_entropy

CATALOGUE_PREFIX = "gitleaks:"  # a catalogue rule's id: `gitleaks:<its id>`
PATH = Path(__file__).with_name("catalogue") / "gitleaks.json"
PROVIDERS_PATH = PATH.with_name("kingfisher-providers.json")
# literals the merged scans already pass over (scans.py): a keyword holding one costs no new pass
# (not `p` or `~`: a `p` is in every other word of code, so each head checked behind it costs at
# every one; `~` only for OpenShift's `sha256~`, a whole pass for one rule)
_PIVOTS = ("_", "-", ".", "ke", "cre", "auth", "zure")
_LEAD = "A-Za-z0-9_.-"
# what must follow a prefix that ends at its scan's literal (`ghp_`, `SG.`): without it the scan
# would stop at every `_` or `.` after those letters
_FOLLOW = "[A-Za-z0-9_=+/-]{8}"
_COMMON = frozenset(("access", "secret", "token", "passw", "passwd", "password", "credential", "api_key", "apikey"))
_TOKEN_PREFIX = re.compile(r"[a-z][a-z0-9]{2,7}[_.-]")
# gitleaks leaves most prefixes unbounded (`gho_[0-9a-zA-Z]{36}`): glued to the end of a word
# (`Sogho_ICANVASRENDERING…`, an identifier) a short one is the word's tail, not a token; one this
# long (`github_pat_`, `FLWSECK_TEST-`) names its provider even glued (`ourgithub_pat_…`)
_GLUED_PREFIX = 8
_LITERAL_START = re.compile(r"^(?:" + re.escape(JSON_BOUNDARY) + r")?\(?(?:\?:)?((?:[A-Za-z0-9_~]|\\[.-]|-){3,})")


@dataclass(frozen=True)
class Entry:
    """One catalogue rule as built: its id, translated pattern, checks and keywords."""

    ident: str
    regex: str
    group: int
    entropy: float
    keywords: tuple[str, ...]
    allow: tuple[str, ...]
    stopwords: tuple[str, ...]


@lru_cache(maxsize=1)
def load() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(PATH.read_text(encoding="utf-8"))
    return data


def entries() -> tuple[Entry, ...]:
    data = load()
    out = []
    for rule in data["rules"]:
        groups = re.compile(rule["regex"]).groups
        out.append(
            Entry(
                rule["id"],
                rule["regex"],
                rule["secret_group"] or (1 if groups else 0),
                float(rule["entropy"]),
                tuple(rule["keywords"]),
                tuple(rule["allow"]),
                tuple(rule["stopwords"]),
            )
        )
    return tuple(out)


# `generic-api-key` joins our own catch-all's kind; a kind must not spell its token's literal
# prefix (`_gitlab_session=`), or the marker would repeat a piece of what it replaced
_KINDS = {"generic-api-key": "generic_secret", "gitlab-session-cookie": "gitlab_cookie"}


def kind_of(ident: str) -> str:
    """The count key and marker of a catalogue rule: gitleaks' id, but for `_KINDS`."""
    return _KINDS.get(ident, ident.replace("-", "_"))


def _prefixes(entry: Entry) -> tuple[tuple[str, ...], bool] | None:
    """What anchors the rule on the merged scans and whether a match starts there (a literal
    prefix), or None when only a new pass could."""
    literal = _LITERAL_START.match(entry.regex)
    if literal is not None and "(?i" not in entry.regex[: literal.end()]:
        text = literal.group(1).replace("\\", "")
        if any(p in text for p in ("_", "-", ".")) or "A" in text:
            return (text,), True
    found: list[str] = []
    for keyword in entry.keywords:
        # a short keyword (`s.`, `ext_`, `sk`) or a word (`token`) is everywhere in code: every hit
        # would cost a regex call; such a rule's shape is the keyword-near-token rule's
        if len(keyword) >= 5 and keyword not in _COMMON and any(p in keyword for p in _PIVOTS):
            found.append(keyword)
    if found:
        return tuple(dict.fromkeys(found)), False
    # a keyword that is a token's own prefix (`sgp_`, `npm_`, `hvs.`): anchored like our provider
    # prefixes, on the separator's scan with the letters before it as its head, and tried where
    # it starts; a known prefix is a secret in any context, prose included
    heads = tuple(k for k in entry.keywords if _TOKEN_PREFIX.fullmatch(k))
    return (heads, True) if heads else None


def _validator(entry: Entry, allow: tuple[re.Pattern[str], ...], stopwords: frozenset[str]) -> Callable[[str], bool]:
    own = tuple(re.compile(a) for a in entry.allow)
    words = frozenset(entry.stopwords)

    def check(secret: str) -> bool:
        if entry.entropy and shannon_entropy(secret) < entry.entropy:
            return False
        if placeholder(secret) or any(a.search(secret) for a in (*allow, *own)):
            return False
        low = secret.lower()
        # a stopword vetoes only a value made of words (`client_access_token`), never a random one
        return not ((low in stopwords or low in words) or (secret.isalpha() and any(w in low for w in words)))

    return check


def rules() -> tuple[Rule, ...]:
    """The anchored catalogue rules, in catalogue order."""
    data = load()
    allow = tuple(re.compile(a) for a in data["allow"])
    stopwords = frozenset(data["stopwords"])
    out = []
    for entry in entries():
        anchored = _prefixes(entry)
        if anchored is None:
            continue
        prefixes, starts = anchored
        regex = entry.regex
        if starts and len(prefixes[0]) < _GLUED_PREFIX and not regex.startswith((JSON_BOUNDARY, "(?i)")):
            regex = FRAGMENTS["NAME_START"] + regex
        out.append(
            Rule(
                kind_of(entry.ident),
                regex,
                entry.group,
                _validator(entry, allow, stopwords),
                prefixes=prefixes,
                # not the prefix again: `sk-sk-sk-…` would stop the scan at every `-`
                follow="(?!" + "|".join(re.escape(p) for p in prefixes) + ")" + _FOLLOW,
                # a match starts at its literal prefix: trying the word starts before it too would
                # cost ~40 regex calls per hit (`sk-sk-sk-…`); a keyword sits inside its match
                lead="" if starts else _LEAD,
                lead_max=64,
                id=CATALOGUE_PREFIX + entry.ident,
            )
        )
    return tuple(out)


# catalogue keywords that are words, not a provider's name
_NOT_PROVIDERS = frozenset(("password", "linear", "intra"))


@lru_cache(maxsize=1)
def provider_words() -> tuple[str, ...]:
    """The providers the catalogue names by a keyword (`asana`, `meraki`, `dropbox`): a keyword
    that is a word of its rule's id, not a token prefix (`akia`, `xoxb`) or an English word."""
    words = {
        k
        for e in entries()
        for k in e.keywords
        if k.isalpha() and (k in e.ident.split("-") if len(k) == 4 else len(k) > 4 and k in e.ident)
    }
    return tuple(sorted(words - _NOT_PROVIDERS))


# the lowercase scans a provider's name can pivot on (scans.py): a name holding none of them
# would cost a pass of its own over every buffer
_NAME_PIVOTS = ("ke", "c", "auth", "zure", "p")
# rule-id words that name no provider, or are English or code words too common to anchor on
_NOT_ANCHORS = frozenset(("generic", "private", "defined", "readme", "square", "linear", "vault", "harness"))


# Providers whose keys their own documentation shows bare (no credential word), which the catalogue
# does not name; each holds a literal an existing scan finds. Left out: names that are English or
# code words too (`apollo`, `amplitude`, `split`, `docker`, `snowflake`, `polygon`, `expo`), and
# providers whose ids or public keys look random beside their name (Spotify's track ids, Replicate's
# prediction ids, Razorpay's payment ids, PayPal's and Pusher's public client keys).
DOCUMENTED_PROVIDERS = (
    "pipedrive", "postmark", "pagerduty", "posthog", "pinecone", "supabase", "upstash", "zapier",
    "apify", "opsgenie", "sparkpost", "deepgram", "deepseek", "openrouter", "appveyor", "pinterest",
    "plivo", "pipedream", "porkbun", "prismic", "pexels", "unsplash", "pixabay", "ipinfo", "ipstack",
    "mapquest", "pushover", "pushbullet", "appsignal", "papertrail", "typesense", "appwrite",
    "pocketbase", "clickup", "helpscout", "pandadoc", "pingdom", "uptimerobot", "logrocket",
    "packagecloud", "applitools", "deepl", "openweather", "weatherstack", "accuweather", "serpapi",
    "newsapi", "alphavantage", "coinmarketcap", "opencage", "positionstack", "ipgeolocation",
    "abstractapi",
)  # fmt: skip


@lru_cache(maxsize=1)
def field_providers() -> tuple[str, ...]:
    """The providers Kingfisher has a rule for (`calendarific`, `cloudsmith`, `chartmogul`): its rule
    files' names, English and code words left out (tools/redaction_catalogue.py)."""
    data = json.loads(PROVIDERS_PATH.read_text(encoding="utf-8"))
    return tuple(data["providers"])


# Kingfisher's names anchored on the scans: each is a branch tried at every `c` or `p` of the text,
# and those of nine letters or more, half of them, cost less than half as much as all (figures in
# docs/redaction.md); a shorter brand is also likelier a word (`float`, `front`, `monday`)
_FIELD_ANCHOR_LENGTH = 9


@lru_cache(maxsize=1)
def anchor_words() -> tuple[str, ...]:
    """The provider names a token after them is searched behind (the provider-near-token rule): the
    catalogue's provider keywords and its rule ids' first words (`hubspot`, `sourcegraph`,
    `dropbox`), Kingfisher's longer provider names and `DOCUMENTED_PROVIDERS`, that an existing
    scan can find, so they cost no pass of their own."""
    ids = {e.ident.split("-")[0] for e in entries()}
    words = {w for w in ids if w.isalpha() and len(w) >= 4} | set(provider_words()) | set(DOCUMENTED_PROVIDERS)
    words |= {w for w in field_providers() if len(w) >= _FIELD_ANCHOR_LENGTH}
    return tuple(sorted(w for w in words - _NOT_ANCHORS if any(p in w for p in _NAME_PIVOTS)))


# Providers whose keys are, or were, UUIDs (Heroku's API keys, npm's legacy tokens, Railway's,
# HubSpot's legacy API keys) or that people name before a key, which no catalogue keyword names
_MORE_PROVIDERS = ("github", "gitlab", "npm", "twilio", "sendgrid", "newrelic", "railway", "vercel", "smartsheet")


@lru_cache(maxsize=1)
def provider_names() -> tuple[str, ...]:
    """Every provider name the rules know: `provider_words`, `anchor_words`, `field_providers` and
    `_MORE_PROVIDERS` (matched only where another anchor hit, so any number costs no scan)."""
    return tuple(sorted({*provider_words(), *anchor_words(), *field_providers(), *_MORE_PROVIDERS}))


def with_provider_words(rule: Rule) -> Rule:
    """`rule` with `{providers}` in its `relax_before` spelled out as the catalogue's provider
    names, in its `prefixes` as the names an existing scan finds (`anchor_words`), and
    `{provider_names}` in its pattern as `provider_names` (a regex run only where its anchor hit)."""
    if "{provider_names}" in rule.pattern:
        names = "|".join(re.escape(w) for w in provider_names())
        rule = replace(rule, pattern=rule.pattern.replace("{provider_names}", f"(?:{names})"))
    if "{providers}" in rule.prefixes:
        rule = replace(rule, prefixes=tuple(p for p in rule.prefixes if p != "{providers}") + anchor_words())
    if "{providers}" not in rule.relax_before:
        return rule
    names = "|".join(re.escape(w) for w in provider_words())
    return replace(rule, relax_before=rule.relax_before.replace("{providers}", f"(?:{names})"))


def unanchored() -> tuple[str, ...]:
    """Catalogue rules left out: no keyword holds a literal the merged scans pass over."""
    return tuple(e.ident for e in entries() if _prefixes(e) is None)
