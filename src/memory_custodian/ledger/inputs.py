"""Turning what a person or an agent typed into the fields of a `create` event, or a clear refusal.

Everything here is checked before anything is written: bad input is an InvalidInput naming the
option, an attempt to claim more trust than the actor has is Refused.
"""

from __future__ import annotations

import os
import re

from ..errors import InvalidInput, Refused
from .ids import add_days, is_iso_utc, iso_to_ms, ms_to_iso, now_iso, parse_iso
from .model import ACTORS, KINDS, PRIORITIES, PROVENANCES, SCOPES

TITLE_MAX = 80
TAG_RE = re.compile(r"^[a-z0-9][a-z0-9._:/+-]*$")
# What each actor's notes carry unless told otherwise; only a person reaches `human`.
DEFAULT_PROVENANCE = {"human": "human", "agent": "agent", "auto": "auto", "system": "auto"}


def choice(value: str, allowed: tuple[str, ...], what: str) -> str:
    if value not in allowed:
        raise InvalidInput(f"unknown {what} {value!r}; use one of: {', '.join(allowed)}")
    return value


def default_title(text: str) -> str:
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    first = first.lstrip("#").strip() or first
    if len(first) <= TITLE_MAX:
        return first
    cut = first[: TITLE_MAX - 1].rstrip()
    return cut + "…"


def clean_text(text, what: str = "note text") -> str:
    if not isinstance(text, str) or not text.strip():
        raise InvalidInput(f"{what} is empty; give the note's text (or `-` to read it from stdin)")
    return text.strip("\n").rstrip()


def clean_title(title, text: str) -> str:
    if title is None:
        return default_title(text)
    title = " ".join(str(title).split())
    if not title:
        raise InvalidInput("--title is empty")
    if len(title) > TITLE_MAX:
        raise InvalidInput(f"--title is {len(title)} characters; keep it to {TITLE_MAX}")
    return title


def clean_tags(tags) -> list[str]:
    out = set()
    for tag in tags or ():
        tag = str(tag).strip().lstrip("#").lower()
        if not tag:
            continue
        if not TAG_RE.match(tag):
            raise InvalidInput(f"tag {tag!r} must be one word of letters, digits and ._:/+- (no spaces)")
        out.add(tag)
    return sorted(out)


def clean_paths(paths) -> list[str]:
    out = set()
    for raw in paths or ():
        from pathlib import PurePosixPath  # here: a recall without paths (the prompt hook) skips pathlib

        path = str(raw).strip()
        if not path:
            continue
        if "\\" in path:
            raise InvalidInput(f"path {path!r} must use / separators (a POSIX path or glob relative to the project root)")
        pure = PurePosixPath(path)
        if pure.is_absolute() or ".." in pure.parts or re.match(r"^[A-Za-z]:", path) or path.startswith("~"):
            raise InvalidInput(f"path {path!r} must be relative to the project root, without '..'")
        text = str(pure)
        if path.endswith("/") and text != ".":
            text += "/"
        out.add(text)
    return sorted(out)


EXPIRES_MAX = "9999-12-31T23:59:59.999Z"  # the last time the ledger's 4-digit-year ISO format can hold


def clean_expires(expires, now: str | None = None) -> str | None:
    """DAYS (a number) from now, a DATE (YYYY-MM-DD, midnight UTC) or a UTC ISO time."""
    if expires is None or expires == "":
        return None
    now = now or now_iso()
    text = str(expires).strip()
    shown = text if len(text) <= 40 else text[:37] + "..."
    max_days = (iso_to_ms(EXPIRES_MAX) - iso_to_ms(now)) // 86_400_000
    too_far = InvalidInput(f"--expires {shown} is too far away; give at most {max_days} days "
                           f"or a date up to {EXPIRES_MAX[:10]}")
    if re.fullmatch(r"\d+(\.\d+)?", text):
        days = float(text)  # never raises here: huge digit strings become inf
        if days <= 0:
            raise InvalidInput("--expires in days must be more than 0")
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
        raise too_far if text[:1] == "9" else InvalidInput(f"--expires {shown!r} is in the past") from exc
    except ValueError as exc:
        raise InvalidInput(f"--expires {shown!r} is not a number of days, a YYYY-MM-DD date or a UTC ISO time") from exc
    if not is_iso_utc(value):  # before year 1000 (gmtime gives fewer digits): long past
        raise InvalidInput(f"--expires {shown!r} is in the past")
    if value <= now:
        raise InvalidInput(f"--expires {shown!r} is in the past")
    return value


def provenance_for(actor: str, provenance: str | None, quote: str | None) -> str:
    choice(actor, ACTORS, "actor")
    if provenance is None:
        if quote and actor in ("agent", "auto", "system"):
            return "user-stated"
        return DEFAULT_PROVENANCE[actor]
    choice(provenance, PROVENANCES, "provenance")
    if provenance == "human" and actor != "human":
        raise Refused(f"an {actor} cannot record a note with human provenance; only a person can")
    if provenance == "user-stated" and not quote:
        raise InvalidInput("user-stated provenance needs the user's verbatim words: pass --quote")
    return provenance


def scope_fields(scope: str, root) -> dict:
    choice(scope, SCOPES, "scope")
    if scope == "workspace":
        return {"scope": "workspace"}
    branch = current_branch(root)
    if not branch:
        raise InvalidInput("--scope branch needs a git checkout on a branch (HEAD is detached or not a git repo)")
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
