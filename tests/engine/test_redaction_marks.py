"""The redaction policy runs its patterns only where a credential could be: names are split
into words without a regex, and a value goes through the URL and credential-shape patterns
only when it holds the text every match of them holds. Both shortcuts must change nothing:
checked here against the patterns applied everywhere, on seeded random names and values built
around real credential shapes and their near misses."""

from __future__ import annotations

import random
import re

import pytest

from aorta import redaction
from aorta.redaction import (PATTERN_ONLY, REDACTED, Redactor, _name_words, _secret_values,
                             credentials_in_bytes)

WORD_SPLIT = re.compile(r"[^A-Za-z0-9]+|(?<=[a-z0-9])(?=[A-Z])")
URL_PASSWORD = re.compile(redaction._URL_PASSWORD_SOURCE)
TOKEN_SHAPES = re.compile(redaction._TOKEN_SHAPES_SOURCE)

# Pieces of real credential shapes (and of things that only look close), joined at random.
FRAGMENTS = [
    "ghp_", "gho_", "ghx_", "gh", "github_pat_", "sk-", "sk_", "AKIA", "ASIA", "AKI", "xoxb-",
    "xoxz-", "hf_", "glpat-", "AIza", "eyJ", "eyJhbGciOiJIUzI1NiJ9.", "-----BEGIN ",
    "RSA PRIVATE KEY-----", "-----END RSA PRIVATE KEY-----", "://", "https://", "user:",
    "p@ss", "@", ":", "/", " ", "\n", "_", "-", ".", "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8",
    "ABCDEFGHIJKLMNOP", "abcdefghij", "0123456789", "é", "İ", "\x00", "max_tokens",
]


def _random_text(rng: random.Random) -> str:
    return "".join(rng.choice(FRAGMENTS) for _ in range(rng.randint(0, 12)))


def _reference_text(text: str) -> str:
    text = URL_PASSWORD.sub(lambda m: m.group("head") + REDACTED + "@", text)
    return TOKEN_SHAPES.sub(REDACTED, text)


@pytest.mark.parametrize("seed", range(4))
def test_names_split_into_the_words_the_regex_finds(seed: int) -> None:
    rng = random.Random(seed)
    alphabet = "aBz09Z_-. é!İıK"
    names = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 14)))
             for _ in range(3000)]
    names += ["HF_TOKEN", "myApiKey", "AWS_SECRET_ACCESS_KEY", "--api-key", "ABCdef", "a1B",
              "MAX_TOKENS", "x__y", "", "__", "ÀPI_KEY"]
    for name in names:
        assert _name_words(name) == [w for w in WORD_SPLIT.split(name) if w], name


@pytest.mark.parametrize("seed", range(4))
def test_values_are_scrubbed_exactly_as_by_the_patterns_run_everywhere(seed: int) -> None:
    rng = random.Random(seed)
    texts = [_random_text(rng) for _ in range(3000)]
    texts += ["postgres://bot:hunter2@db/x", "ghp_" + "a" * 36, "AKIAABCDEFGHIJKLMNOP",
              "x-----BEGIN EC PRIVATE KEY-----\nabc", "plain value", ""]
    redacted = 0
    for text in texts:
        expected = _reference_text(text)
        assert PATTERN_ONLY.text(text) == expected, repr(text)
        found = {m.group("pw") for m in URL_PASSWORD.finditer(text)}
        found |= {m.group(0) for m in TOKEN_SHAPES.finditer(text)}
        assert _secret_values("", text) == found, repr(text)
        redacted += expected != text
    assert redacted > 100        # the random values did reach the patterns


def test_known_secrets_and_byte_streams_still_scrubbed() -> None:
    redactor = Redactor(["s3cr3t-value"])
    assert redactor.text("x s3cr3t-value y") == f"x {REDACTED} y"
    data = b"log https://u:pw-123456@host/ and ghp_" + b"b" * 36
    assert credentials_in_bytes().sub(b"#", data) == b"log #host/ and #"
    assert credentials_in_bytes() is credentials_in_bytes()
