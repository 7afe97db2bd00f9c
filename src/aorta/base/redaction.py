"""The one redaction policy, for every writer: values of secret names, URL passwords, credential
shapes and, through a `Redactor`, one run's known secret values in free text such as a payload's
stderr. The policy as users see it: docs/reliability.md, "Credentials".
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

REDACTED = "<redacted>"
MIN_SCRUB_CHARS = 6    # shorter known values are not sought in free text: "abc" would wreck logs

# A name is secret when one of its words is one of _SECRET_WORDS or ends with one of
# _SECRET_ENDINGS (PGPASSWORD, SSHPASS, MYSQLPWD), except the English words in _NOT_SECRET;
# the shell's own PWD and OLDPWD (the working directory) never are.
_SECRET_WORDS = frozenset({"PAT", "KEY", "AUTH", "COOKIE", "DSN", "BEARER", "SAS"})
_SECRET_ENDINGS = ("PASS", "PASSWD", "PASSWORD", "PASSWORDS", "PASSPHRASE", "PWD", "TOKEN",
                   "SECRET", "SECRETS", "CREDENTIAL", "CREDENTIALS", "APIKEY", "ACCESSKEY",
                   "SECRETKEY", "PRIVATEKEY")
_NOT_SECRET = frozenset({"BYPASS", "COMPASS", "ENCOMPASS", "SURPASS", "TRESPASS"})

# Bounded repeats and a left guard keep every pattern linear on long hostile values.
_URL_PASSWORD_SOURCE = (r"(?P<head>(?<![A-Za-z0-9+.\-])[A-Za-z][A-Za-z0-9+.\-]{0,30}://"
                        r"[^\s/@:]{0,256}:)(?P<pw>[^\s/@]{1,256})@")
TOKEN_SHAPES = (
    r"\bgh[pousr]_[A-Za-z0-9]{30,}",
    r"\bgithub_pat_[A-Za-z0-9_]{30,}",
    r"\bsk-[A-Za-z0-9_\-]{20,}",
    r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b",
    r"\bxox[abposr]-[A-Za-z0-9\-]{10,}",
    r"\bhf_[A-Za-z0-9]{30,}",
    r"\bglpat-[A-Za-z0-9_\-]{20,}",
    r"\bAIza[0-9A-Za-z_\-]{35}",
    r"\beyJ[A-Za-z0-9_\-]{10,}\.eyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}",
    r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|\Z)",
)
_TOKEN_SHAPES_SOURCE = "|".join(TOKEN_SHAPES)
# Text that every match of a pattern contains. The patterns run only where it is present:
# their leading \b keeps the engine from skipping ahead, which costs ~20x on a long log.
_URL_MARK = "://"
_TOKEN_MARKS = ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "sk-", "AKIA", "ASIA",
                "xoxa-", "xoxb-", "xoxp-", "xoxo-", "xoxs-", "xoxr-", "hf_", "glpat-", "AIza",
                "eyJ", "-----BEGIN ")
_URL_PASSWORD = re.compile(_URL_PASSWORD_SOURCE)
_TOKEN_SHAPES = re.compile(_TOKEN_SHAPES_SOURCE)
#: URL passwords and credential shapes, for byte streams (whole match replaced).
CREDENTIALS_IN_BYTES = re.compile(f"{_URL_PASSWORD_SOURCE}|{_TOKEN_SHAPES_SOURCE}"
                                  .replace("(?P<head>", "(?:").replace("(?P<pw>", "(?:").encode())
# "myApiKey" -> my Api Key, "MAX_TOKENS" -> MAX TOKENS, "PASSWORD1" -> PASSWORD.
_WORD_BREAK = re.compile(r"[^A-Za-z]+|(?<=[a-z])(?=[A-Z])")


def looks_secret(name: str) -> bool:
    """Whether a variable or option name says that its value is a credential
    (`PGPASSWORD`, `GH_PAT`, `db.password1`, `--api-key`; not `PWD`, `MAX_TOKENS`, `KEYBOARD`)."""
    if name.upper() in ("PWD", "OLDPWD"):
        return False
    return any(w in _SECRET_WORDS or (w.endswith(_SECRET_ENDINGS) and w not in _NOT_SECRET)
               for w in (w.upper() for w in _WORD_BREAK.split(name) if w))


def _secret_option(arg: str) -> bool:
    """Whether `arg` is an option (`--api-key=x`, `--api-key`) whose name says it is secret."""
    if not arg.startswith("-") or arg in ("-", "--") or arg[1:2].isdigit():
        return False
    return looks_secret(arg.lstrip("-").split("=", 1)[0])


class Redactor:
    """Hides credentials in what aorta writes. `secrets` are clear values known to be secret
    (found in the run's inputs); the name and shape rules apply to everything."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        kept = sorted({s for s in secrets if len(s) >= MIN_SCRUB_CHARS}, key=len, reverse=True)
        self.secrets: tuple[str, ...] = tuple(kept)
        self._known = re.compile("|".join(re.escape(s) for s in kept)) if kept else None

    @classmethod
    def for_inputs(cls, envs: Iterable[Mapping[str, str]] = (),
                   argvs: Iterable[Sequence[str]] = ()) -> Redactor:
        """A redactor that also knows every secret value in these environments and argvs."""
        found = [_secret_values(key, value) for env in envs for key, value in env.items()]
        return cls(set().union(*found, *map(_argv_secrets, argvs)))

    def text(self, text: str) -> str:
        """Free text with every known secret, URL password and credential shape hidden."""
        if self._known is not None:
            text = self._known.sub(REDACTED, text)
        if _URL_MARK in text:
            text = _URL_PASSWORD.sub(lambda m: m.group("head") + REDACTED + "@", text)
        if _may_hold_token(text):
            text = _TOKEN_SHAPES.sub(REDACTED, text)
        return text

    def env(self, env: Mapping[str, str]) -> dict[str, str]:
        """An environment to record: values of secret names hidden, the rest scrubbed."""
        return {k: (REDACTED if looks_secret(k) else self.text(v)) for k, v in env.items()}

    def argv(self, argv: Sequence[str]) -> list[str]:
        """A command line to record: `--api-key=V` and `--api-key V` hide V, whatever V looks
        like (`--password -x` too: the word after a secret option is its value)."""
        out: list[str] = []
        for i, arg in enumerate(argv):
            if _secret_option(arg) and "=" in arg:
                out.append(arg.split("=", 1)[0] + "=" + REDACTED)
            elif i and _secret_option(argv[i - 1]) and "=" not in argv[i - 1]:
                out.append(REDACTED)
            else:
                out.append(self.text(arg))
        return out

    def doc(self, value: Any) -> Any:
        """Every string of a JSON-like document scrubbed (keys included)."""
        if isinstance(value, str):
            return self.text(value) if len(value) >= 8 or self._known is not None else value
        if isinstance(value, dict):
            return {self.doc(k) if isinstance(k, str) else k: self.doc(v)
                    for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self.doc(v) for v in value]
        return value


def _secret_values(name: str, value: str) -> set[str]:
    found = {value} if looks_secret(name) and value else set()
    if _URL_MARK in value:
        found |= {m.group("pw") for m in _URL_PASSWORD.finditer(value)}
    if _may_hold_token(value):
        found |= {m.group(0) for m in _TOKEN_SHAPES.finditer(value)}
    return found


def _may_hold_token(text: str) -> bool:
    return any(mark in text for mark in _TOKEN_MARKS)


def _argv_secrets(argv: Sequence[str]) -> set[str]:
    found: set[str] = set()
    for i, arg in enumerate(argv):
        if _secret_option(arg):
            if "=" in arg:
                found.add(arg.split("=", 1)[1])
            elif i + 1 < len(argv):
                found.add(argv[i + 1])
        found |= _secret_values("", arg)
    return {f for f in found if f}


#: The policy with no known values: names, URL passwords and credential shapes only.
PATTERN_ONLY = Redactor()
