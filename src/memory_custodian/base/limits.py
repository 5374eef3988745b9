"""Every input limit, in one table: what is bounded, where it is read, and how much is allowed.

A limit is enforced where its input is read, not only where it is written: a shard line can come
from a merged pull request or a hand edit, a hook's stdin from any host, an edit file from any
editor. Over a limit, the input is refused with one line naming the limit (a write), or the one
line is skipped and named (a shard line: it costs that line, never the ledger). The table and the
limits are documented in `docs/limits.md`.
"""

from __future__ import annotations

# A note is a paragraph or a page, not a file (characters; counts are per note).
NOTE_TEXT_CHARS = 32_000
TITLE_CHARS = 80
QUOTE_CHARS = 2_000
REASON_CHARS = 2_000
TAG_CHARS, TAGS_PER_NOTE = 64, 32
PATH_CHARS, PATHS_PER_NOTE = 512, 64

# A path a recall is asked about (a touched file, `read --path`): as deep as a file system allows
# (Linux's PATH_MAX), far past the 512 characters of a note's anchor; a tool call's paths, at most.
QUERY_PATH_CHARS = 4_096
QUERY_PATHS = 64

# One shard line (bytes, without its newline). The longest line a v1 writer can make is a note at
# every limit above with every character escaped as \uNNNN (about 0.45 MB); a longer line is not an
# event this version wrote, so it is skipped and named, never parsed (a 100 MB line cost 2.5 GB).
SHARD_LINE_BYTES = 1_048_576

# Shard lines one command reads into the index, and their bytes (`Index.catch_up`): a fresh clone of
# a big ledger, or a million-line shard merged in, must not hold a command for minutes. A command
# reads this much, answers from what is indexed and says how much it has not read; a detached
# process reads the rest (`ledger/index/background.py`). A change to a note waits for all of it.
INDEX_LINES_PER_COMMAND = 5_000
INDEX_BYTES_PER_COMMAND = 4 * 1_048_576

# Notes one recall ranks (the newest its question matches): ranking reads every note it ranks, so a
# question matching a million notes cost 12 s. The rest are counted, and the answer says how many
# were not ranked. Every ledger the project measures (75,962 notes at most) stays under it.
RANKED_NOTES = 100_000

# A hook's stdin (bytes): the host's JSON payload. A prompt is cut far below this before it is
# used (see session/sessions.MAX_MESSAGE_CHARS); past this, the hook reads no further and answers
# from what it has, so a 50 MB paste cannot hold the host past its time-out.
HOOK_STDIN_BYTES = 2 * 1_048_576

# What the prompt hook searches the ledger with (characters from a prompt's start): ranking reads
# every word, so a 2 MB paste cost the hook 2.7 s; the hook's footer says when a prompt was longer.
PROMPT_QUERY_CHARS = 20_000

# An edit file checked back in (bytes): every block of it is a note, held to NOTE_TEXT_CHARS.
EDIT_FILE_BYTES = 12 * 1_048_576  # every block a new 30 KB note: 1.6 s to check in (16 MiB took 2.2 s)

# Characters of what was given that an error message quotes (an id, a path, a page address).
SHOWN_CHARS = 40
