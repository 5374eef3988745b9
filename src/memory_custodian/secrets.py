"""The secret detector: what an agent must never write into memory, found before it is written.

Memory is committed and read by every future session, so a credential written there leaks twice.
Findings name the kind and the place (line, column) and never carry the matched text, so a
report, an error or a log line can never repeat the secret it found.
"""

from __future__ import annotations

import re

from .errors import Refused
from .records import Record


class SecretFinding(Record):
    """Where a secret was found and what kind, never the secret: `line` and `column` are 1-based,
    `kind` names it ("AWS access key")."""

    FIELDS = ("line", "column", "kind")

    def to_dict(self) -> dict:
        return {"kind": self.kind, "line": self.line, "column": self.column}


# The patterns are compiled on first use, and each only for a text holding a literal that every
# match of it must contain (`_TRIGGERS`): compiling them all cost every fresh `remember` and every
# prompt hook more than the rest of the detector, and most texts trigger none.
_COMPILED: dict[str, re.Pattern] = {}


def _compiled(source: str, flags: int = 0) -> re.Pattern:
    pattern = _COMPILED.get(source)
    if pattern is None:
        pattern = _COMPILED[source] = re.compile(source, flags)
    return pattern


# Placeholders people write in docs instead of a real value; they must pass.
_PLACEHOLDER_SRC = r"""^(?:
        <[^>]*> | \$\{\{[^}]*\}\} | \$\{[^}]*\} | \{[^{}]*\} | \$\(?[A-Za-z_][A-Za-z0-9_]*\)? | \{\{[^}]*\}\} | %\(?[A-Za-z_]*\)?s? |
        \*+ | x+ | X+ | \.+ | -+ | _+ |
        (?i:password|passwd|pass|pwd|secret|changeme|example|redacted|placeholder|none|null|nil|
            true|false|undefined|empty|your[-_a-z]*|my[-_a-z]*|dummy|fake|test|todo|tbd|hidden|env|
            \[redacted\]|\.\.\.|xxx+|user|username|token)
    )$"""

# The value after `password=` counts as literal when it is quoted, or when it is a bare word
# that is not code (a call, an attribute, a subscript, a variable reference).
_ASSIGN_SRC = r"""(?ix)
    (?<![A-Za-z0-9])
    (?P<key>[A-Za-z0-9_.-]*?(?:password|passwd|passphrase|secret|api[_-]?key|access[_-]?key|
        auth[_-]?token|access[_-]?token|refresh[_-]?token|private[_-]?key|client[_-]?secret))
    ["']?\s*(?::(?!=)|=(?!=)|:=)\s*
    (?:
        (?P<q>["'])(?P<qval>[^"'\n]*)(?P=q)
      | (?P<bare>[^\s"'`,;)\]}]+)
    )
    """

_CONN_SRC = r"\b[a-zA-Z][a-zA-Z0-9+.-]*://(?P<user>[^\s:/@'\"]*):(?P<pw>[^\s@/'\"]+)@[^\s'\"]+"

# (kind, pattern) — the order matters only where one kind is a prefix of another
# (Anthropic keys start like OpenAI's), so the more specific pattern comes first.
_PATTERNS: list[tuple[str, str]] = [
    ("private key block", r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"),
    ("AWS access key", r"\b(?:AKIA|ASIA|ABIA|ACCA|AROA|AIDA)[0-9A-Z]{16}\b"),
    ("AWS secret access key",
     r"(?i)\baws_?secret_?(?:access_?)?key\b[\"']?\s*[:=]\s*[\"']?[A-Za-z0-9/+=]{40}(?![A-Za-z0-9/+=])"),
    ("GitHub token", r"\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\b"),
    ("GitLab token", r"\bgl(?:pat|dt|ptt|rt|cbt|imt|oas|agent)-[A-Za-z0-9_-]{20,}"),
    ("Slack token", r"\bxox[abposr]-[A-Za-z0-9-]{10,}"),
    ("Slack webhook URL", r"https://hooks\.slack\.com/services/T[A-Za-z0-9]+/B[A-Za-z0-9]+/[A-Za-z0-9]+"),
    # pk_ keys are publishable by design; only secret (sk_) and restricted (rk_) keys are credentials
    ("Stripe key", r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}"),
    ("Anthropic API key", r"\bsk-ant-[A-Za-z0-9_-]{20,}"),
    # legacy keys are one unbroken alphanumeric run, so hyphenated prose such as
    # `sk-learn-compatible-estimators` never matches; project keys carry their prefix
    ("OpenAI API key",
     r"\bsk-(?:(?:proj|svcacct|admin)-[A-Za-z0-9_-]{20,}|(?=[A-Za-z0-9]*\d)[A-Za-z0-9]{32,}(?![A-Za-z0-9_-]))"),
    ("Google API key", r"\bAIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])"),
    ("Google OAuth token", r"\bya29\.[0-9A-Za-z_-]{20,}"),
    ("Google OAuth client secret", r"\bGOCSPX-[0-9A-Za-z_-]{20,}"),
    ("JWT", r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
]

# For each kind, literals of which every match contains at least one, matched case-sensitively
# (a case-insensitive pattern gets only a literal it spells without letters: `:` or `=`).
_TRIGGERS: dict[str, tuple[str, ...]] = {
    "private key block": ("-----BEGIN ",),
    "AWS access key": ("AKIA", "ASIA", "ABIA", "ACCA", "AROA", "AIDA"),
    "AWS secret access key": (":", "="),
    "GitHub token": ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
    "GitLab token": ("glpat-", "gldt-", "glptt-", "glrt-", "glcbt-", "glimt-", "gloas-", "glagent-"),
    "Slack token": ("xox",),
    "Slack webhook URL": ("https://hooks.slack.com/services/T",),
    "Stripe key": ("k_live_", "k_test_"),
    "Anthropic API key": ("sk-ant-",),
    "OpenAI API key": ("sk-",),
    "Google API key": ("AIza",),
    "Google OAuth token": ("ya29.",),
    "Google OAuth client secret": ("GOCSPX-",),
    "JWT": ("eyJ",),
}


def _literal_value(value: str, quoted: bool) -> bool:
    value = value.strip()
    if len(value) < 4 or _compiled(_PLACEHOLDER_SRC, re.X).match(value):
        return False
    if quoted:
        return True
    # A bare word is code when it calls, indexes, dereferences or names a variable/env reference.
    if any(ch in value for ch in "()[]{}$%<>"):
        return False
    if "." in value and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.]*", value):
        return False  # settings.password, os.environ.get
    if re.fullmatch(r"[A-Za-z_]+", value):
        return False  # a bare identifier such as `password = user_password`
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", value) and not re.search(r"\d", value):
        return False
    return True


def _line_col(text: str, offset: int, line_starts: list[int]) -> tuple[int, int]:
    import bisect

    index = bisect.bisect_right(line_starts, offset) - 1
    return index + 1, offset - line_starts[index] + 1


def scan(text: str) -> list[SecretFinding]:
    """Every credential-looking span in `text`, sorted by place; never the secret itself."""
    if not text:
        return []
    spans: list[tuple[int, int, str]] = []
    for kind, source in _PATTERNS:
        if any(t in text for t in _TRIGGERS[kind]):
            for m in _compiled(source).finditer(text):
                spans.append((m.start(), m.end(), kind))
    conn = _compiled(_CONN_SRC).finditer(text) if "://" in text else ()
    for m in conn:
        if _literal_value(m.group("pw"), quoted=True):
            spans.append((m.start(), m.end(), "connection string with a password"))
    assign = _compiled(_ASSIGN_SRC).finditer(text) if (":" in text or "=" in text) else ()
    for m in assign:
        quoted = m.group("q") is not None
        value = m.group("qval") if quoted else m.group("bare")
        if _literal_value(value or "", quoted):
            key = m.group("key").lower()
            kind = "password assignment" if "pass" in key else "secret assignment"
            spans.append((m.start(), m.end(), kind))
    if not spans:
        return []
    # One finding per place: a token that matches two patterns (a JWT inside `token=`) is one secret.
    spans.sort(key=lambda s: (s[0], -(s[1] - s[0]), s[2]))
    kept: list[tuple[int, int, str]] = []
    for start, end, kind in spans:
        if kept and start < kept[-1][1]:
            continue
        kept.append((start, end, kind))
    line_starts = [0] + [i + 1 for i, ch in enumerate(text) if ch == "\n"]
    findings = []
    for start, _end, kind in kept:  # by offset, so by (line, column)
        line, col = _line_col(text, start, line_starts)
        findings.append(SecretFinding(line=line, column=col, kind=kind))
    return findings


def refuse_secrets(text: str, where: str) -> None:
    """Raise `Refused` naming the first secret's kind and line in `where`; never echo it."""
    findings = scan(text)
    if findings:
        first = findings[0]
        more = f" (and {len(findings) - 1} more)" if len(findings) > 1 else ""
        raise Refused(
            f"{where} contains what looks like a{'n' if first.kind[0] in 'AEIOU' else ''} {first.kind} "
            f"at line {first.line}{more} — remove it; secrets must not be stored in memory"
        )
