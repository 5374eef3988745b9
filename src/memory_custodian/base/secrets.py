"""The secret detector: what an agent must never write into memory, found before it is written.

Memory is committed and read by every future session, so a credential written there leaks twice.
Findings name the kind and the place (line, column) and never carry the matched text, so a
report, an error or a log line can never repeat the secret it found.
"""

from __future__ import annotations

import re

from .errors import SecretFound
from .records import Record
from .secret_rules import RULES


class SecretFinding(Record):
    """Where a secret was found and what kind, never the secret: `line` and `column` are 1-based,
    `kind` names it ("AWS access key")."""

    line: int
    column: int
    kind: str

    def to_dict(self) -> dict:
        return {"kind": self.kind, "line": self.line, "column": self.column}


# The patterns are compiled on first use, and each only for a text holding a literal that every
# match of it must contain (`secret_rules.RULES`): compiling them all cost every fresh `remember` and every
# prompt hook more than the rest of the detector, and most texts trigger none.
_COMPILED: dict[str, re.Pattern] = {}


def _compiled(source: str, flags: int = 0) -> re.Pattern:
    pattern = _COMPILED.get(source)
    if pattern is None:
        pattern = _COMPILED[source] = re.compile(source, flags)
    return pattern


# Placeholders people write in docs instead of a real value; they must pass.
_PLACEHOLDER_SRC = r"""^(?:
        <[^>]*> | \$\{\{[^}]*\}\} | \$\{[^}]*\} | \{[^{}]*\} | \$\([A-Za-z_][A-Za-z0-9_]*\) | \{\{[^}]*\}\} |
        %\(?[A-Za-z_]*\)?s? |
        \*+ | x+ | X+ | \.+ | -+ | _+ |
        (?i:password|passwd|pass|pwd|secret|changeme|example|redacted|placeholder|none|null|nil|
            true|false|undefined|empty|your[-_a-z]*|my[-_a-z]*|dummy|fake|test|todo|tbd|hidden|env|
            \[redacted\]|\.\.\.|xxx+|user|username|token)
    )$"""

# Shapes no real credential has: one character making most of it (`ghp_xxxx…`, `AKIAXXXX…`), an
# elision, an alphabet run, or a fill-in marker (`PUT_YOUR_TOKEN_HERE`). The AWS documentation's
# `AKIAIOSFODNN7EXAMPLE` is a valid key format and stays flagged on purpose.
_FILLER_SRC = r"(?i)x{6,}|\*{4,}|#{4,}|\.\.\.|abcdefgh|your[_-]|_here\b|put_your|replace[_-]?me"


def _filler(value: str) -> bool:
    if len(value) >= 8 and 2 * max(value.count(ch) for ch in set(value)) > len(value):
        return True
    return _compiled(_FILLER_SRC).search(value) is not None


# The value after `password=` counts as literal when it is quoted, or when it is a bare word
# that is not code (a call, an attribute, a subscript, a variable reference). `[ \t]*`, never
# `\s*`: an empty `KEY=` in a `.env.example` must not take the next line as its value.
_ASSIGN_SRC = r"""(?ix)
    (?<![A-Za-z0-9])
    (?P<key>[A-Za-z0-9_.-]*?(?:pass(?:word|wd|phrase)?|pwd|secret|token|credentials?|api[_-]?key|
        access[_-]?key|private[_-]?key|encryption[_-]?key|signing[_-]?key|master[_-]?key|client[_-]?secret)
        (?:[_-]?key)?|sonar[_.-]?login)
    ["']?[ \t]*(?P<sep>=>|:{1,3}=|\?=|:(?![=:])|=(?![=>]))(?P<gap>[ \t]*)
    (?:
        (?P<q>["'])(?P<qval>[^"'\n]*)(?P=q)
      | (?P<bare>[^\s"'`,;)\]}]+)
    )
    """

# An environment assignment (`NAME=value`) of any name, caught by its value's
# entropy: above any hex digest (at most 4 bits a character), below random base64.
_ENV_SRC = r"(?<![A-Za-z0-9_])[A-Z][A-Z0-9_]*=(?P<value>[^\s\"'#]{20,})"
_ENV_ENTROPY = 4.2

# A constant or environment name `…_KEY` given a long random-looking value (`HEROKU_KEY = "6386…"`):
# no secret word in the name, so the value's shape decides; lower-case and camel-case `…Key` names
# (`routing_key`, `correlationKey`) are too often not secrets, and so are the names listed here.
_NAMED_KEY_SRC = r"""(?x)(?<![A-Za-z0-9_.-])(?P<key>[A-Z][A-Z0-9_]*_KEY)["']?[ \t]*
    (?:=>|:{1,3}=|\?=|=|:)[ \t]*(?P<q>["'`]?)(?P<value>[A-Za-z0-9+/=_.~-]{16,})(?P=q)(?![A-Za-z0-9+/=_.~-])"""
_NOT_SECRET_KEYS = ("public", "pub_", "primary", "foreign", "sort", "partition", "cache", "idempotency", "bucket",
                    "schema", "sequence", "object", "lookup", "kms", "hotkey", "index", "csrf", "xsrf")

_CONN_SRC = r"\b[a-zA-Z][a-zA-Z0-9+.-]*://(?P<user>[^\s:/@'\"]*):(?P<pw>[^\s@/'\"]+)@[^\s'\"]+"


# Kinds found by their context rather than their shape; a shaped kind inside one names the finding.
GENERIC_KINDS = frozenset({"password assignment", "secret assignment", "high-entropy environment value",
                           "connection string with a password", "Basic auth header", "Bearer token",
                           "password on a curl command line", "password on a mysql command line",
                           "authorization header"})


_TABLE: list = []


def _rules() -> tuple[list, tuple[str, ...]]:
    """The rule table and every distinct trigger literal in it: testing each literal once against a
    text, then each rule's triggers against the set found, costs a prompt hook a fraction of testing
    every rule's own triggers in turn."""
    if not _TABLE:
        _TABLE.extend([RULES, tuple(sorted({t for _kind, _source, triggers in RULES for t in triggers}))])
    return _TABLE[0], _TABLE[1]


def _literal_value(value: str, quoted: bool, env: bool = False) -> bool:
    """Whether `value` is a literal secret rather than a placeholder or code; `env` for `NAME=value`,
    whose bare value is a literal unless it references something."""
    value = value.strip()
    if len(value) < 4 or _compiled(_PLACEHOLDER_SRC, re.X).match(value) or _filler(value):
        return False
    if value[0] in "<[{%" or value[-1] in ">]}" or ("$" in value and _references(value)):
        return False  # a reference or a fill-in: `$TOKEN`, `<password>`, `[PASSWORD]`, `%PW%`
    if quoted:
        return True
    # A bare word is code when it calls, indexes, dereferences or names a variable/env reference,
    # or a YAML tag, anchor, alias or block marker.
    if any(ch in value for ch in "()[]{}%<>") or value[0] in "!&*|":
        return False
    if env:
        return True
    if "." in value and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.]*", value) \
            and not any(_token_like(part) for part in value.split(".")):
        return False  # settings.password, os.environ.get — but not a Vault `s.ZC9Ecf4M…`
    # not a bare name such as `password = user_password` or `secretKey: api-key`
    return not re.fullmatch(r"[A-Za-z_][A-Za-z_.-]*", value)


def _references(value: str) -> bool:
    """Whether a `$` in `value` is a variable or command reference (`$DB_PASSWORD`, `${PW}`, `$(cat f)`,
    a whole-value `$password`) rather than a character of the secret (`p$ssw0rd!Xy7`, `$ecretPa55w0rd`,
    a Django key's `$`). A password-like name (letters of both cases and a digit) is a value, not a
    variable: nobody names a variable `$ecretPa55w0rd`."""
    for m in re.finditer(r"\$", value):
        rest = value[m.end():]
        if rest[:1] in ("{", "("):
            return True
        name = re.match(r"[A-Za-z_][A-Za-z0-9_]*", rest)
        if name is None:
            continue  # `$` before a digit or a sign: a character (`p@$$w0rd`, `$1`)
        word = name.group()
        if word.isupper() and len(word) > 1:
            return True  # `$HOME/x`, `pre$TOKEN`: an environment variable
        whole = m.start() == 0 and name.end() == len(rest)
        if whole and not (re.search(r"\d", word) and word.lower() != word and word.upper() != word):
            return True  # `$password`, `$db_pass`: a shell, PHP or Perl variable
    return False


def _token_like(word: str) -> bool:
    return len(word) >= 16 and bool(re.search(r"\d", word)) and word.lower() != word and word.upper() != word


def entropy(value: str) -> float:
    """Shannon entropy of `value`, in bits a character."""
    import math

    counts: dict[str, int] = {}
    for ch in value:
        counts[ch] = counts.get(ch, 0) + 1
    return -sum(n / len(value) * math.log2(n / len(value)) for n in counts.values()) if value else 0.0


def _line_col(text: str, offset: int, line_starts: list[int]) -> tuple[int, int]:
    import bisect

    index = bisect.bisect_right(line_starts, offset) - 1
    return index + 1, offset - line_starts[index] + 1


def _assignment_spans(text: str) -> list[tuple[int, int, str]]:
    spans = []
    pattern, pos = _compiled(_ASSIGN_SRC), 0
    # a rejected value may itself be the next key (`TOKEN=password = "…"`): search on after the key
    while (m := pattern.search(text, pos)) is not None:
        pos = m.end("key")
        quoted = m.group("q") is not None
        value = m.group("qval") if quoted else m.group("bare")
        # `NAME=value` with an upper-case name is an environment assignment, whose value is never code
        env = m.group("key").isupper() and text.startswith("=", m.end("key"))
        key = m.group("key").lower()
        # `io.jsonwebtoken:jjwt` (no space after a bare colon) is a coordinate, not a mapping
        glued = m.group("sep") == ":" and not quoted and not m.group("gap")
        if not glued and not any(word in key for word in _NOT_SECRET_KEYS) and _literal_value(value or "", quoted, env):
            kind = "password assignment" if "pass" in m.group("key").lower() else "secret assignment"
            spans.append((m.start(), m.end(), kind))
            pos = m.end()
    if "_KEY" in text:
        for m in _compiled(_NAMED_KEY_SRC).finditer(text):
            value = m.group("value")
            if not any(word in m.group("key").lower() for word in _NOT_SECRET_KEYS) and entropy(value) >= 3.0 \
                    and re.search(r"\d", value) and re.search(r"[A-Za-z]", value) and _literal_value(value, quoted=True):
                spans.append((m.start(), m.end(), "secret assignment"))
    starts = {start for start, _end, _kind in spans}
    for m in _compiled(_ENV_SRC).finditer(text):
        value = m.group("value")
        # a URL's password is the connection-string rule's; a URL or an ARN alone is an address
        if m.start() not in starts and "://" not in value and not value.startswith("arn:") and not _filler(value) \
                and entropy(value) >= _ENV_ENTROPY and re.search(r"\d", value) \
                and re.search(r"[A-Za-z]", value):
            spans.append((m.start(), m.end(), "high-entropy environment value"))
    return spans


def scan(text: str) -> list[SecretFinding]:
    """Every credential-looking span in `text`, sorted by place; never the secret itself."""
    if not text:
        return []
    spans: list[tuple[int, int, str]] = []
    rules, literals = _rules()
    present = {t for t in literals if t in text}
    for kind, source, triggers in rules:
        if not present.isdisjoint(triggers):
            for m in _compiled(source).finditer(text):
                value = m.groupdict().get("value")
                if (not _filler(m.group()) if value is None else _literal_value(value, quoted=True)):
                    spans.append((m.start(), m.end(), kind))
    for m in (_compiled(_CONN_SRC).finditer(text) if "://" in text else ()):
        if _literal_value(m.group("pw"), quoted=True):
            spans.append((m.start(), m.end(), "connection string with a password"))
    if "=" in text or ":" in text:
        spans.extend(_assignment_spans(text))
    if not spans:
        return []
    # One finding per place: a token that matches two patterns (a JWT inside `token=`) is one secret.
    spans.sort(key=lambda s: (s[0], -(s[1] - s[0]), s[2]))
    kept: list[tuple[int, int, str]] = []
    for start, end, kind in spans:
        if kept and start < kept[-1][1]:
            # a named kind inside a generic one (a GitHub token after `Bearer `) is reported by name
            if kept[-1][2] in GENERIC_KINDS and kind not in GENERIC_KINDS:
                kept[-1] = (start, end, kind)
            continue
        kept.append((start, end, kind))
    line_starts = [0] + [i + 1 for i, ch in enumerate(text) if ch == "\n"]
    findings = []
    for start, _end, kind in kept:  # by offset, so by (line, column)
        line, col = _line_col(text, start, line_starts)
        findings.append(SecretFinding(line=line, column=col, kind=kind))
    return findings


# How far past a cut `redact(..., keep=)` still scans, so a credential the cut would split is seen
# whole (past the longest one-line credential the rules match).
CUT_MARGIN_CHARS = 8_192


def redact(text: str, keep: int | None = None) -> str:
    """`text` with every line holding a secret replaced by `[redacted: KIND]`; with `keep`, only its
    first `keep` characters (a 2 MB paste is not scanned whole to keep 300 of them)."""
    if keep is not None:
        return redact(text[:keep + CUT_MARGIN_CHARS])[:keep]
    findings = scan(text)
    if not findings:
        return text
    lines = text.split("\n")
    for f in findings:
        lines[f.line - 1] = f"[redacted: {f.kind}]"
    return "\n".join(lines)


def refuse_secrets(text: str, where: str) -> None:
    """Raise `SecretFound` naming the first secret's kind and line in `where`; never echo it."""
    findings = scan(text)
    if findings:
        first = findings[0]
        more = f" (and {len(findings) - 1} more)" if len(findings) > 1 else ""
        raise SecretFound(
            f"{where} contains what looks like a{'n' if first.kind[0] in 'AEIOU' else ''} {first.kind} "
            f"at line {first.line}{more} — remove it; secrets must not be stored in memory"
        )
