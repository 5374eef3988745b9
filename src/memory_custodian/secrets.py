"""The secret detector: what an agent must never write into memory, found before it is written.

Memory is committed and read by every future session, so a credential written there leaks twice.
Findings name the kind and the place (line, column) and never carry the matched text, so a
report, an error or a log line can never repeat the secret it found.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .errors import Refused


@dataclass(frozen=True, order=True)
class SecretFinding:
    line: int  # 1-based
    column: int  # 1-based
    kind: str  # e.g. "AWS access key"

    def to_dict(self) -> dict:
        return {"kind": self.kind, "line": self.line, "column": self.column}


# Placeholders people write in docs instead of a real value; they must pass.
_PLACEHOLDER_RE = re.compile(
    r"""^(?:
        <[^>]*> | \$\{\{[^}]*\}\} | \$\{[^}]*\} | \{[^{}]*\} | \$\(?[A-Za-z_][A-Za-z0-9_]*\)? | \{\{[^}]*\}\} | %\(?[A-Za-z_]*\)?s? |
        \*+ | x+ | X+ | \.+ | -+ | _+ |
        (?i:password|passwd|pass|pwd|secret|changeme|example|redacted|placeholder|none|null|nil|
            true|false|undefined|empty|your[-_a-z]*|my[-_a-z]*|dummy|fake|test|todo|tbd|hidden|env|
            \[redacted\]|\.\.\.|xxx+|user|username|token)
    )$""",
    re.X,
)

# The value after `password=` counts as literal when it is quoted, or when it is a bare word
# that is not code (a call, an attribute, a subscript, a variable reference).
_ASSIGN_RE = re.compile(
    r"""(?ix)
    (?<![A-Za-z0-9])
    (?P<key>[A-Za-z0-9_.-]*?(?:password|passwd|passphrase|secret|api[_-]?key|access[_-]?key|
        auth[_-]?token|access[_-]?token|refresh[_-]?token|private[_-]?key|client[_-]?secret))
    ["']?\s*(?::(?!=)|=(?!=)|:=)\s*
    (?:
        (?P<q>["'])(?P<qval>[^"'\n]*)(?P=q)
      | (?P<bare>[^\s"'`,;)\]}]+)
    )
    """
)

_CONN_RE = re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.-]*://(?P<user>[^\s:/@'\"]*):(?P<pw>[^\s@/'\"]+)@[^\s'\"]+")

# (kind, pattern) — the order matters only where one kind is a prefix of another
# (Anthropic keys start like OpenAI's), so the more specific pattern comes first.
_PATTERNS: list[tuple[str, re.Pattern]] = [
    ("private key block", re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----")),
    ("AWS access key", re.compile(r"\b(?:AKIA|ASIA|ABIA|ACCA|AROA|AIDA)[0-9A-Z]{16}\b")),
    ("AWS secret access key", re.compile(
        r"(?i)\baws_?secret_?(?:access_?)?key\b[\"']?\s*[:=]\s*[\"']?[A-Za-z0-9/+=]{40}(?![A-Za-z0-9/+=])")),
    ("GitHub token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\b")),
    ("GitLab token", re.compile(r"\bgl(?:pat|dt|ptt|rt|cbt|imt|oas|agent)-[A-Za-z0-9_-]{20,}")),
    ("Slack token", re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}")),
    ("Slack webhook URL", re.compile(r"https://hooks\.slack\.com/services/T[A-Za-z0-9]+/B[A-Za-z0-9]+/[A-Za-z0-9]+")),
    # pk_ keys are publishable by design; only secret (sk_) and restricted (rk_) keys are credentials
    ("Stripe key", re.compile(r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}")),
    ("Anthropic API key", re.compile(r"\bsk-ant-[A-Za-z0-9_-]{20,}")),
    # legacy keys are one unbroken alphanumeric run, so hyphenated prose such as
    # `sk-learn-compatible-estimators` never matches; project keys carry their prefix
    ("OpenAI API key", re.compile(
        r"\bsk-(?:(?:proj|svcacct|admin)-[A-Za-z0-9_-]{20,}|(?=[A-Za-z0-9]*\d)[A-Za-z0-9]{32,}(?![A-Za-z0-9_-]))")),
    ("Google API key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])")),
    ("Google OAuth token", re.compile(r"\bya29\.[0-9A-Za-z_-]{20,}")),
    ("Google OAuth client secret", re.compile(r"\bGOCSPX-[0-9A-Za-z_-]{20,}")),
    ("JWT", re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}")),
]


def _literal_value(value: str, quoted: bool) -> bool:
    value = value.strip()
    if len(value) < 4 or _PLACEHOLDER_RE.match(value):
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
    for kind, pattern in _PATTERNS:
        for m in pattern.finditer(text):
            spans.append((m.start(), m.end(), kind))
    for m in _CONN_RE.finditer(text):
        if _literal_value(m.group("pw"), quoted=True):
            spans.append((m.start(), m.end(), "connection string with a password"))
    for m in _ASSIGN_RE.finditer(text):
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
    for start, _end, kind in kept:
        line, col = _line_col(text, start, line_starts)
        findings.append(SecretFinding(line=line, column=col, kind=kind))
    return sorted(findings)


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
