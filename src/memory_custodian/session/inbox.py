"""`memory_propose`: an agent's candidate for the curated tier goes to `inbox.md`, nowhere else.

Curated files are the rules people review; an agent may only suggest. The inbox is the one
curated file the MCP server writes, and only by adding a dated item a person then accepts or
drops (`memory-custodian add` / `forget`); no changelog entry, since nothing is decided yet.
"""

from __future__ import annotations

import os

from ..base.errors import InvalidInput
from ..base.fsutil import atomic_write, project_lock, read_utf8
from ..base.project import require_memory_dir
from ..base.secrets import refuse_secrets
from ..curated.write.entries import NO_CANDIDATES, prepend_dated_item, today

MAX_PROPOSAL_CHARS = 600
INBOX_HEADER = "# Memory Inbox\n\nEntries are newest first.\n"


def clean_proposal(text: str) -> str:
    one_line = " ".join(str(text or "").split())
    if not one_line:
        raise InvalidInput("a proposal needs text: say the rule or fact in one or two sentences")
    if len(one_line) > MAX_PROPOSAL_CHARS:
        raise InvalidInput(f"a proposal is at most {MAX_PROPOSAL_CHARS} characters ({len(one_line)} given); "
                           "shorten it, or record the detail with memory_remember and propose the rule")
    return one_line


def propose(memory, text: str) -> dict:
    """Add `text` as today's newest inbox item; returns {"file", "item", "date"}."""
    item = clean_proposal(text)
    refuse_secrets(item, "the proposal")
    # Not `Memory.add(type="inbox")`: it also records the add in changelog.md, and the server
    # writes no curated file but the inbox. The item format is the curated tier's own.
    return _append_inbox(memory, item)


def _append_inbox(memory, item: str) -> dict:
    memory_dir = require_memory_dir(memory.memory_dir_str)
    path = os.path.join(memory_dir, "inbox.md")
    date = today()
    with project_lock(memory_dir):
        current = read_utf8(path) if os.path.isfile(path) else INBOX_HEADER
        atomic_write(path, prepend_dated_item(current, date, item, drop_line=NO_CANDIDATES))
    return {"date": date, "file": "inbox.md", "item": item}
