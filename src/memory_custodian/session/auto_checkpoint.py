"""The automatic task checkpoint: at compaction and session end, one `task` note of what was being done.

Only a session that changed files or wrote memory leaves one: a question answered is no task, and a
committed note of nothing would be every teammate's open task for a month.

Written without any model, from what the hooks saw: the user's last request (quoted, credentials
redacted line by line), the files the session changed, the branch, and the notes written while it ran. It is a
`task` at provenance `auto` (weakest: shown as memory to verify), expires like any task, and each
new checkpoint of a session supersedes that session's previous one, so a session leaves one.
"""

from __future__ import annotations

import json
import os

from ..base.errors import NotFound
from ..ledger.storage.inputs import current_branch
from .checkpoint import session

REQUEST_CHARS = 300
MIN_REQUEST_WORDS = 3
TITLE_REQUEST_CHARS = 60
NOTE_IDS = 20
TAG = "session-checkpoint"


def keep_request(state, memory_dir, prompt: str) -> None:
    """Keep the user's latest request for the checkpoint, credentials redacted (never on disk raw)."""
    if len(prompt.split()) >= MIN_REQUEST_WORDS:  # "thanks!" is not what the session was doing
        from ..base.secrets import redact

        # a line holding a secret becomes `[redacted: KIND]`, so a cut can never leave half of one
        session(state, memory_dir)["request"] = redact(prompt.strip(), keep=REQUEST_CHARS)


def written_since(memory_dir, offsets: dict, since: str = "") -> list[tuple[str, str, str, str]]:
    """(at, note id, kind, actor) of every note created in the ledger after `offsets` (shard → size)
    and at or after `since` (ISO UTC; shards of earlier months are not read). Read straight from the
    shards: a hook or `status` must not fold the whole ledger to learn what was written lately."""
    folder = os.path.join(os.fspath(memory_dir), "ledger")
    found: list[tuple[str, str, str, str]] = []
    try:
        names = sorted(n for n in os.listdir(folder) if n.endswith(".jsonl") and n[:7] >= since[:7])
    except FileNotFoundError:
        return []
    for name in names:
        with open(os.path.join(folder, name), "rb") as fh:
            fh.seek(int(offsets.get(name, 0)))
            tail = fh.read()
        for raw in tail.split(b"\n"):
            if b'"op":"create"' not in raw:
                continue
            try:
                event = json.loads(raw)
            except ValueError:
                continue  # a torn last line: the ledger's own reader reports it
            if isinstance(event, dict) and str(event.get("at", "")) >= since:
                found.append((str(event.get("at")), str(event.get("note")), str(event.get("kind")),
                              str(event.get("actor"))))
    return sorted(found)


def body_text(wb: dict, branch: str | None, written: list[str]) -> str:
    files = wb.get("session_files") or []
    lines = [f"Last request: \"{wb['request']}\"" if wb.get("request") else "Last request: (none seen)",
             "Files changed: " + (", ".join(files) if files else "none seen by the hooks"),
             f"Branch: {branch or '(none: detached HEAD or no git)'}",
             "Notes written meanwhile: " + (" ".join(f"#{n}" for n in written[:NOTE_IDS]) if written else "none")]
    if len(written) > NOTE_IDS:
        lines[-1] += f" and {len(written) - NOTE_IDS} more"
    return "\n".join(lines) + "\n(written automatically at compaction or session end; verify before relying on it)"


IDLE_LINES = ("Files changed: none seen by the hooks", "Notes written meanwhile: none")


def is_idle_checkpoint(note) -> bool:
    """An automatic checkpoint of a session that changed no file and wrote no memory (older versions
    wrote them): never an open task worth a line at session start."""
    return (note.provenance == "auto" and TAG in (note.tags or ()) and
            all(line in (note.body or "").splitlines() for line in IDLE_LINES))


def write_checkpoint(memory, state) -> str | None:
    """Record (or supersede) this session's checkpoint; the new note's id, or None when there was
    nothing to say or nothing changed since the last one."""
    wb = session(state, memory.memory_dir_str)
    written = [n for _, n, _, actor in written_since(memory.memory_dir_str, wb.get("offsets") or {})
               if actor != "auto"]
    if not (wb.get("session_files") or written):
        return None  # a question answered, nothing changed: no record of nothing for the whole team
    body = body_text(wb, current_branch(memory.root_str), written)
    if body == wb.get("auto_body"):
        return None  # compaction then session end with nothing new: one note, not two
    request = wb.get("request") or "work without a recorded request"
    short = request if len(request) <= TITLE_REQUEST_CHARS else request[:TITLE_REQUEST_CHARS - 1].rstrip() + "…"
    title = "Last session: " + " ".join(short.split())
    previous = wb.get("auto_note")
    result = memory.remember(body, kind="task", priority="medium", title=title, tags=(TAG,),
                             paths=tuple(wb.get("session_files") or ())[:8], actor="auto",
                             supersedes=previous if previous and _active(memory, previous) else None,
                             reason="a newer automatic checkpoint of the same session")
    note_id = result.id
    wb.update(auto_note=note_id, auto_body=body)
    return note_id


def _active(memory, note_id: str) -> bool:
    try:
        return memory.note(note_id).state in ("active", "stale")
    except NotFound:
        return False  # forgotten by a person meanwhile: start afresh
