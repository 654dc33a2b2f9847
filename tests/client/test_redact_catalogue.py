"""The provider catalogues (gitleaks' rules and Kingfisher's provider names as data, docs/redaction.md
"The catalogue"): every RE2 construct the build translates, the built data's pin and bounds, how the
tool names Kingfisher's providers, and catalogue rules redacting tokens our own rules never listed,
in a transcript line."""

from __future__ import annotations

import io
import json
import random
import re
import string
import sys
import tarfile
from pathlib import Path

import pytest

from sessionledger.core.redaction import Redactor, catalogue
from sessionledger.core.redaction.re2 import CAP, JSON_BOUNDARY, NESTING_MAX, TranslationError, nesting, translate
from tests.client.test_redact_rules import unbounded_quantifiers

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))

import redaction_catalogue

REDACTOR = Redactor()
RNG = random.Random(20260211)


def _token(n: int, alphabet: str = string.ascii_letters + string.digits) -> str:
    return "".join(RNG.choice(alphabet) for _ in range(n))


@pytest.mark.parametrize(
    ("re2", "python"),
    [
        (r"p8e-(?i)[a-z0-9]{32}", r"p8e-(?i:[a-z0-9]{32})"),  # an inline flag mid-pattern is scoped
        (r"(?:a(?i)b)c", r"(?:a(?i:b))c"),  # … to the end of its enclosing group
        (r"(?i)abc", r"(?i)abc"),  # a leading flag stays global
        (r"a(?-i:b)c", r"a(?-i:b)c"),  # a scoped group is copied
        (r"x(?:[^\w-]|\z)", r"x(?:[^\w-]|\Z)"),  # end of text
        (r"pat[[:alnum:]]{14}", r"pat[0-9A-Za-z]{14}"),  # a POSIX class
        (r"[[:^digit:]]", r"[^0-9]"),
        (r"[_[:upper:]]", r"[_A-Z]"),  # a POSIX class inside a bracket expression
        (r"\x{41}b", r"\x41b"),
        (r"a+b*c{2,}", f"a{{1,{CAP}}}b{{0,{CAP}}}c{{2,{CAP}}}"),  # unbounded repetitions get a bound
        (r"[a-z]{2,5}?", r"[a-z]{2,5}?"),
        # gitleaks' token end stops at `\"` and at Markdown's and HTML's punctuation too
        (r"""(?:[\x60'"\s;]|\\[nr]|$)""", r"""(?:[\x60'"\s;)\]}<>*,|&\\]|\\[nr]|$)"""),
        (r"""[^\x60'"\s;]""", r"""[^\x60'"\s;\\]"""),  # … not a value's own class
        (r"(?P<key>[a-z]{4})", r"(?P<key>[a-z]{4})"),
        (r"\bAKIA", JSON_BOUNDARY + "AKIA"),  # a token right after a JSON escape (`\nAKIA…`)
    ],
)
def test_re2_constructs_translate_to_python(re2: str, python: str) -> None:
    assert translate(re2) == python
    re.compile(python.encode())


@pytest.mark.parametrize("before", [b" ", b"\\n", b"\\t", b"\\u2192", b"\\u001b[32m", b"\\u001b[1;33m"])
def test_translated_word_boundary_starts_a_token_after_an_escape(before: bytes) -> None:
    """In a JSONL line a token follows the `n` of `\\n`, the last digit of a Read line's `\\u2192`
    or the `m` of a colour code: no word character of the text."""
    pattern = re.compile(translate(r"\bAKIA[A-Z0-9]{16}").encode())
    assert pattern.search(b'"' + before + b"AKIA" + b"Q" * 16)
    assert not pattern.search(b'"x' + b"AKIA" + b"Q" * 16)


@pytest.mark.parametrize("shown", ["**{}**", "({})", "<td>{}</td>", "[{}]", "{}, then", "`{}`"])
def test_catalogue_token_ends_at_markdown_and_html_punctuation(shown: str) -> None:
    """A provider token in chat text sits in bold, brackets or a table cell; gitleaks' own end (a quote,
    white space or `;`) left it there."""
    rng = random.Random(3)
    token = "s-s4t2ud-" + "".join(rng.choice("0123456789abcdef") for _ in range(64))  # a 42 School secret
    text = shown.format(token)
    line = json.dumps({"type": "user", "message": {"role": "user", "content": text}}).encode() + b"\n"

    redacted = json.loads(Redactor().redact_bytes(line).data)["message"]["content"]

    assert redacted == shown.format("[REDACTED:intra42_client_secret]")


@pytest.mark.parametrize("re2", [r"\p{Greek}", r"(?U)a+", r"\x{20ac}", r"(?<!a)b"])
def test_constructs_python_lacks_are_refused(re2: str) -> None:
    with pytest.raises(TranslationError):
        translate(re2)


def test_translated_inline_flag_keeps_its_meaning() -> None:
    pattern = re.compile(translate(r"\b(LTAI(?i)[a-z0-9]{20})"))
    assert pattern.search("LTAI" + "Ab" * 10)
    assert not pattern.search("ltai" + "ab" * 10)  # the literal before the flag stays case-sensitive


def test_nested_repetitions_are_measured() -> None:
    assert nesting(r"[a-z]{0,50}x") == 1
    assert nesting(r"(?:[a-z]{1,20}\.){1,5}") == 100
    assert nesting(translate(r"(?:a+)+")) > NESTING_MAX


def test_built_catalogue_is_pinned_bounded_and_licensed() -> None:
    data = catalogue.load()
    assert data["version"].startswith("v8.") and len(data["commit"]) == 40 and len(data["sha256"]) == 64
    assert (catalogue.PATH.parent / "LICENSE-gitleaks.txt").read_text().startswith("MIT License")
    assert len(data["rules"]) >= 200
    for rule in data["rules"]:
        assert unbounded_quantifiers(rule["regex"]) == [], rule["id"]
        assert nesting(rule["regex"]) <= NESTING_MAX, rule["id"]


def test_catalogue_rules_run_without_a_pass_of_their_own() -> None:
    """Every catalogue rule the engine runs is anchored on the merged scans (no new pass)."""
    assert len(catalogue.rules()) >= 100
    assert all(rule.prefixes for rule in catalogue.rules())


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("Sogho_ICANVASRENDERINGVIACONTEXT2D3D5D7D8D", True),  # an identifier ending in `gho_`
        ("Bighr_ICANVASRENDERINGVIACONTEXT2D3D5D7D8D", True),
        ("Soglpat-ICANVASRENDERINGVIACON", True),
        ("say gho_ICANVASRENDERINGVIACONTEXT2D3D5D7D8D", False),  # the token itself
        ("ourgithub_pat_" + "A1b2C3d4E5" * 8 + "xy", False),  # a long prefix names its provider glued
    ],
)
def test_a_short_catalogue_prefix_glued_to_a_word_is_the_word(text: str, kept: bool) -> None:
    """gitleaks leaves `gho_[0-9a-zA-Z]{36}` unbounded: inside `Sogho_…` it is an identifier's tail.
    Other scanners' test material counts that a false positive, and a glued long prefix a secret."""
    redacted, _ = REDACTOR.redact_text(text)
    assert (redacted == text) is kept


@pytest.mark.parametrize(
    "make",
    [
        lambda: "p8e-" + _token(32, string.ascii_lowercase + string.digits),  # Adobe client secret
        lambda: "pscale_tkn_" + _token(40),  # PlanetScale
        lambda: "dp.pt." + _token(43),  # Doppler
        lambda: "sntryu_" + _token(64, "0123456789abcdef"),  # Sentry user token
        lambda: "rdme_" + _token(70, string.ascii_lowercase + string.digits),  # ReadMe
    ],
)
def test_catalogue_token_in_a_transcript_line_is_redacted(make: object) -> None:
    secret = make()  # type: ignore[operator]
    line = json.dumps({"type": "user", "message": {"content": f"deploy with\n{secret}\nplease"}}).encode() + b"\n"
    out = REDACTOR.redact_bytes(line).data
    assert secret.encode() not in out
    assert json.loads(out)["message"]["content"].startswith("deploy with\n[REDACTED:")


def test_kingfisher_provider_names_are_pinned_and_licensed() -> None:
    data = json.loads(catalogue.PROVIDERS_PATH.read_text())
    assert data["version"].startswith("v1.") and len(data["commit"]) == 40 and len(data["sha256"]) == 64
    assert "Apache License" in (catalogue.PROVIDERS_PATH.parent / "LICENSE-kingfisher.txt").read_text()
    names = catalogue.field_providers()
    assert len(names) >= 400 and {"calendarific", "cloudsmith", "chartmogul"} <= set(names)
    assert not set(names) & set(data["not_providers"])


def _kingfisher_rules(*stems: str) -> dict[str, bytes]:
    return {f"data/rules/{stem}.yml": b"rules: []\n" for stem in stems}


def test_kingfisher_names_lose_their_glued_kind_and_words() -> None:
    """A file name is the provider's, sometimes with what its rule finds glued on; English and
    code words and names under five letters are no provider a token after them vouches for."""
    files = _kingfisher_rules("calendlyapikey", "telegrambottoken", "twitter_v2", "collect2", "float", "box", "lob")
    assert redaction_catalogue.build_kingfisher(files)["providers"] == ["calendly", "telegram", "twitter"]


def test_kingfisher_rules_are_read_from_the_release_archive(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without a clone the tool reads GitHub's archive of the pinned commit, and of it only the rule
    files and the licence (the digest covers those: an archive's own bytes are not stable)."""
    files = _kingfisher_rules("chartmogul", "cloudsmith")
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for path, body in {**files, "LICENSE": b"Apache License", "README.md": b"x"}.items():
            info = tarfile.TarInfo(f"kingfisher-{redaction_catalogue.KINGFISHER_COMMIT}/{path}")
            info.size = len(body)
            archive.addfile(info, io.BytesIO(body))
    opened: list[str] = []

    def urlopen(url: str, timeout: float) -> io.BytesIO:
        opened.append(url)
        return io.BytesIO(buffer.getvalue())

    monkeypatch.setattr(redaction_catalogue.urllib.request, "urlopen", urlopen)
    read, licence = redaction_catalogue.kingfisher_source(None)
    assert opened == [redaction_catalogue.KINGFISHER_ARCHIVE.format(commit=redaction_catalogue.KINGFISHER_COMMIT)]
    assert read == files and licence == b"Apache License"
