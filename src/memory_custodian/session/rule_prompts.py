"""Standing rules caught as the user states them, and the nudge that asks the agent to record one.

A rule the user states in a prompt is the most valuable note there is and the one most often lost:
the agent follows it for the session and the next session has never heard of it. The prompt hook
asks the agent to record it as a directive quoting the user's words; the capture layer then binds
the quote and the note becomes `user-stated`. A rule is often one sentence of a longer message (a
paragraph, a list, a pasted log with a request at the end), so the message is cut into sentences,
code blocks and log lines are set aside, and the nudge quotes the first sentence that states a rule
(`rule_sentences.is_rule` says which do). A false nudge costs the agent a question to the user, so
the detector errs towards silence, and the nudge tells the agent to ask when in doubt rather than
record a guess. Figures on labelled real sentences: `benchmarks/bench_rule_detector.py`.
"""

from __future__ import annotations

from .rule_sentences import is_rule, starts_like_log

MAX_QUOTE_CHARS = 240
MAX_PROMPT_CHARS = 20_000  # past this it is a pasted file, not a message
MAX_SENTENCES = 200  # a 20,000-character paste of prose costs ~15 ms at most
ABBREVIATIONS = ("e.g.", "i.e.", "etc.", "vs.", "cf.", "approx.", "no.", "fig.", "resp.")
LIST_MARKS = "-*•+>"


def standing_rule(prompt: str) -> str | None:
    """The first sentence of `prompt` that states a standing rule, as the user wrote it; else None."""
    if not prompt or len(prompt) > MAX_PROMPT_CHARS:
        return None

    for sentence in sentences(prompt)[:MAX_SENTENCES]:
        if is_rule(sentence):
            return sentence[:MAX_QUOTE_CHARS]  # as the user wrote it: the quote binds verbatim
    return None


def sentences(prompt: str) -> list[str]:
    """The prose sentences of a message, each as written (list marks aside): fenced code and log lines
    are left out, lines a paragraph wraps are joined."""
    lines: list[str] = []
    fenced = False
    joinable = False
    for raw in prompt.splitlines():
        stripped = raw.strip()
        if stripped.startswith(("```", "~~~")):
            fenced = not fenced
            joinable = False
            continue
        if fenced or not stripped or stripped.startswith(("#", "|")) or starts_like_log(stripped):
            joinable = False
            continue
        item = _unlisted(stripped)
        if joinable and item == stripped and stripped[:1].islower() and lines and lines[-1][-1:] not in ".!?:;":
            lines[-1] += " " + stripped  # a paragraph wrapped at a line end
        else:
            lines.append(item)
        joinable = True
    out: list[str] = []
    for line in lines:
        out.extend(_split_line(line))
    return out


def _unlisted(line: str) -> str:
    """`line` without its list mark ("- ", "* ", "1. ", "2) ")."""
    while line[:1] in LIST_MARKS and line[1:2] == " ":
        line = line[2:].lstrip()
    digits = len(line) - len(line.lstrip("0123456789"))
    if 0 < digits <= 3 and line[digits:digits + 2] in (". ", ") "):
        line = line[digits + 2:].lstrip()
    return line


def _split_line(line: str) -> list[str]:
    """Sentences of one line: cut after . ! ? before a capital, a backtick or a quote, never inside
    inline code or after an abbreviation."""
    out: list[str] = []
    start = 0
    in_code = False
    for i, ch in enumerate(line):
        if ch == "`":
            in_code = not in_code
        if in_code or ch not in ".!?" or i + 2 >= len(line) or line[i + 1] != " ":
            continue
        nxt = line[i + 2]
        if not (nxt.isupper() or nxt in "`\"'*(["):
            continue
        piece = line[start:i + 1]
        if piece.lower().endswith(ABBREVIATIONS) or (ch == "." and piece[-2:-1].isdigit()):
            continue
        out.append(piece.strip())
        start = i + 2
    out.append(line[start:].strip())
    return [s for s in out if s]


def nudge(quote: str) -> str:
    """The one line the prompt hook adds when the user stated a rule: it names the exact sentence to
    record, and asks the agent to check with the user rather than record a guess."""
    said = " ".join(quote.split())
    return ("memory-custodian · the user may have just stated a standing rule: \u201c" + said + "\u201d. If it is "
            "meant to hold in every later session, record that exact sentence once, as both the note's text and its "
            "quote: `memory_remember` with kind `directive` (or `memory-custodian remember --actor agent --kind "
            "directive --quote \"\u2026\" \"\u2026\"`). If you are not sure the user meant it to last, ask them "
            "first and record it only on a yes; never record a reworded rule or a guess, and record nothing for a "
            "one-off.")
