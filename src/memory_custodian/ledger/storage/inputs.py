"""Turning what a person or an agent typed into the fields of a `create` event, or a clear refusal.

Everything here is checked before anything is written: bad input is an InvalidInput naming the
option, an attempt to claim more trust than the actor has is Refused.
"""

from __future__ import annotations

import os
import posixpath
import re
import sys

from ...base import limits
from ...base.errors import InvalidInput, Refused
from ...base.textsafe import shown
from .ids import add_days, is_iso_utc, iso_to_ms, ms_to_iso, now_iso, parse_iso
from .model import ACTORS, KINDS, PRIORITIES, PROVENANCES, SCOPES, TITLE_MAX

# A note is a paragraph or a page, not a file: these bound what one write can add to the committed
# ledger (declared once, with every other input limit, in base/limits.py).
BODY_MAX = limits.NOTE_TEXT_CHARS
QUOTE_MAX = limits.QUOTE_CHARS
REASON_MAX = limits.REASON_CHARS
TAG_MAX, TAGS_MAX = limits.TAG_CHARS, limits.TAGS_PER_NOTE
PATH_MAX, PATHS_MAX = limits.PATH_CHARS, limits.PATHS_PER_NOTE
TAG_RE = re.compile(r"^[a-z0-9][a-z0-9._:/+-]*$")
# What each actor's notes carry unless told otherwise; only a person reaches `human`.
DEFAULT_PROVENANCE = {"human": "human", "agent": "agent", "auto": "auto", "system": "auto"}


def choice(value: str, allowed: tuple[str, ...], what: str) -> str:
    if value not in allowed:
        raise InvalidInput(f"unknown {what} {shown(str(value))}; use one of: {', '.join(allowed)}")
    return value


def default_title(text: str) -> str:
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    first = first.lstrip("#").strip() or first
    from ...base.tokens import cut_words

    return cut_words(first, TITLE_MAX)


def clean_text(text, what: str = "note text") -> str:
    if not isinstance(text, str) or not text.strip():
        raise InvalidInput(f"{what} is empty; give the note's text (or `-` to read it from stdin)")
    text = require_utf8(text, what).strip("\n").rstrip()
    return bounded(text, BODY_MAX, what)


def bounded(value: str, limit: int, what: str, field: str | None = None) -> str:
    """`value`, refused when it is over `limit` characters, naming the limit."""
    if len(value) > limit:
        raise InvalidInput(f"{what} is {len(value)} characters; the limit is {limit} — shorten it", field=field)
    return value


def require_utf8(value: str, what: str, field: str | None = None) -> str:
    """Refuse text that cannot be stored as UTF-8, naming `what` and the line.

    Bytes that are not UTF-8 on the command line (or a stdin read with surrogateescape) reach us
    as lone surrogates; they would only fail later, after the checks, when the event is encoded.
    """
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        code = ord(value[exc.start])
        bad = f"byte 0x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else f"lone surrogate U+{code:04X}"
        line = value.count("\n", 0, exc.start) + 1
        where = f" on line {line}" if "\n" in value else ""
        raise InvalidInput(f"{what} is not valid UTF-8 ({bad}{where}); give it as UTF-8 text "
                           "(convert it with e.g. `iconv -t UTF-8`)", field=field) from exc
    return value


def read_stdin_text(what: str = "note text") -> str:
    """The text piped to `-`, decoded as UTF-8 strictly: a Latin-1 file piped in is refused by name."""
    stream = getattr(sys.stdin, "buffer", None)
    if stream is None:  # a text stream stood in for stdin (tests): held to the same rule
        return require_utf8(sys.stdin.read(), f"{what} from stdin")
    raw = stream.read()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise InvalidInput(f"{what} is not valid UTF-8 (byte 0x{raw[exc.start]:02x} at offset {exc.start}); pipe it "
                           "as UTF-8 (convert it with e.g. `iconv -t UTF-8`)", path="stdin", line=line) from exc
    # what reading sys.stdin as text did: universal newlines
    return text.replace("\r\n", "\n").replace("\r", "\n")


def clean_title(title, text: str) -> str:
    if title is None:
        return default_title(text)
    title = " ".join(require_utf8(str(title), "{field}", "title").split())
    if not title:
        raise InvalidInput("{field} is empty", field="title")
    if len(title) > TITLE_MAX:
        raise InvalidInput(f"{{field}} is {len(title)} characters; keep it to {TITLE_MAX}", field="title")
    return title


def clean_tags(tags) -> list[str]:
    out = set()
    for tag in tags or ():
        tag = str(tag).strip().lstrip("#").lower()
        if not tag:
            continue
        bounded(tag, TAG_MAX, "a tag")
        if not TAG_RE.match(tag):
            raise InvalidInput(f"tag {shown(tag)} must be one word of letters, digits and ._:/+- (no spaces)")
        out.add(tag)
    if len(out) > TAGS_MAX:
        raise InvalidInput(f"{len(out)} tags; the limit is {TAGS_MAX} a note")
    return sorted(out)


def clean_paths(paths, *, query: bool = False) -> list[str]:
    """Paths as stored (a note's anchors, `PATH_MAX` each, `PATHS_MAX` a note) or, with `query`, as a
    recall is asked about them: a file the agent touched may sit deeper than any anchor is long."""
    out = set()
    limit = limits.QUERY_PATH_CHARS if query else PATH_MAX
    for raw in paths or ():
        path = str(raw).strip()
        if not path:
            continue
        require_utf8(path, f"path '{_shown(path)}'")
        bounded(path, limit, "a path")
        path = path.replace("\\", "/")  # as a touched path is read (`globs.normalize_path`): one rule for both
        if path.startswith(("/", "~")) or ".." in path.split("/") or re.match(r"^[A-Za-z]:", path):
            raise InvalidInput(f"path {shown(path)} must be relative to the project root, without '..'")
        text = posixpath.normpath(path)
        if path.endswith("/") and text != ".":
            text += "/"
        out.add(text)
    if len(out) > (limits.QUERY_PATHS if query else PATHS_MAX):
        raise InvalidInput(f"{len(out)} paths; the limit is {limits.QUERY_PATHS if query else PATHS_MAX}"
                           + ("" if query else " a note"))
    return sorted(out)


def _shown(value: str, width: int = 40) -> str:
    """`value` printable on any terminal: undecodable bytes as `\\xff`, cut to `width` characters."""
    try:
        text = value.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:
        text = value.encode("utf-8", "backslashreplace").decode("utf-8")
    return text if len(text) <= width else text[: width - 3] + "..."


LIMIT_MAX = 1_000_000  # far above any ledger; keeps `limit + cap` inside SQLite's 64-bit integers


def clean_limit(limit) -> int:
    """`--limit`: a whole number from 0 to LIMIT_MAX."""
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 0:
        raise InvalidInput("{field} must be 0 or more", field="limit")
    if limit > LIMIT_MAX:
        shown = str(limit) if limit < 10 ** 30 else "of that size"  # str() of a 5,000-digit int raises
        raise InvalidInput(f"{{field}} {shown} is too large; give a number from 0 to {LIMIT_MAX}", field="limit")
    return limit


EXPIRES_MAX = "9999-12-31T23:59:59.999Z"  # the last time the ledger's 4-digit-year ISO format can hold


def clean_expires(expires, now: str | None = None) -> str | None:
    """DAYS (a number) from now, a DATE (YYYY-MM-DD, midnight UTC) or a UTC ISO time."""
    if expires is None or expires == "":
        return None
    now = now or now_iso()
    text = str(expires).strip()
    shown = text if len(text) <= 40 else text[:37] + "..."
    max_days = (iso_to_ms(EXPIRES_MAX) - iso_to_ms(now)) // 86_400_000
    too_far = InvalidInput(f"{{field}} {shown} is too far away; give at most {max_days} days "
                           f"or a date up to {EXPIRES_MAX[:10]}", field="expires")
    if re.fullmatch(r"\d+(\.\d+)?", text):
        days = float(text)  # never raises here: huge digit strings become inf
        if days <= 0:
            raise InvalidInput("{field} in days must be more than 0", field="expires")
        if days > max_days:
            raise too_far
        return add_days(now, days)
    try:
        if re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
            value = text + "T00:00:00.000Z"
            parse_iso(value)
        else:
            dt = parse_iso(text)
            value = ms_to_iso(int(dt.timestamp() * 1000))
    except OverflowError as exc:  # an offset pushing year 1 or 9999 out of range
        past = InvalidInput(f"{{field}} {shown!r} is in the past", field="expires")
        raise too_far if text[:1] == "9" else past from exc
    except ValueError as exc:
        raise InvalidInput(f"{{field}} {shown!r} is not a number of days, a YYYY-MM-DD date or a UTC ISO time",
                           field="expires") from exc
    if not is_iso_utc(value):  # before year 1000 (gmtime gives fewer digits): long past
        raise InvalidInput(f"{{field}} {shown!r} is in the past", field="expires")
    if value <= now:
        raise InvalidInput(f"{{field}} {shown!r} is in the past", field="expires")
    return value


def provenance_for(actor: str, provenance: str | None, quote: str | None) -> str:
    choice(actor, ACTORS, "actor")
    if isinstance(quote, str):
        require_utf8(quote, "{field}", "quote")
    if provenance is None:
        if quote and actor in ("agent", "auto", "system"):
            return "user-stated"
        return DEFAULT_PROVENANCE[actor]
    choice(provenance, PROVENANCES, "provenance")
    if provenance == "human" and actor != "human":
        raise Refused(f"an {actor} cannot record a note with human provenance; only a person can")
    if provenance == "user-stated" and not quote:
        raise InvalidInput("user-stated provenance needs the user's verbatim words: pass {field}", field="quote")
    return provenance


def scope_fields(scope: str, root) -> dict:
    choice(scope, SCOPES, "scope")
    if scope == "workspace":
        return {"scope": "workspace"}
    branch = current_branch(root)
    if not branch:
        raise InvalidInput("{field} branch needs a git checkout on a branch (HEAD is detached or not a git repo)",
                           field="scope")
    return {"scope": "branch", "branch": branch}


def current_branch(root) -> str | None:
    """The checked-out branch, read from .git/HEAD without running git (hooks must stay fast)."""
    root = os.fspath(root)
    git = os.path.join(root, ".git")
    try:
        if os.path.isfile(git):
            with open(git, encoding="utf-8") as fh:
                line = fh.read().strip()
            if not line.startswith("gitdir:"):
                return None
            git = os.path.realpath(os.path.join(root, line[7:].strip()))
        with open(os.path.join(git, "HEAD"), encoding="utf-8") as fh:
            head = fh.read().strip()
    except OSError:
        return None
    if head.startswith("ref: refs/heads/"):
        return head[len("ref: refs/heads/"):]
    return None


def kind_priority(kind: str, priority: str) -> tuple[str, str]:
    return choice(kind, KINDS, "kind"), choice(priority, PRIORITIES, "priority")
