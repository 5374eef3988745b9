"""Standing rules caught as the user states them: "always …", "never …", "from now on …".

A rule the user states in a prompt is the most valuable note there is and the one most often lost:
the agent follows it for the session and the next session has never heard of it. The prompt hook
asks the agent to record it as a directive quoting the user's words; the capture layer then binds
the quote and the note becomes `user-stated`. A false nudge costs the agent a line of reading, so
the detector errs towards silence: one-off instructions ("for now", "yet", "this time"), questions
and idioms ("don't worry", "never mind") are not rules. Precision and recall on a labelled set of
real sentences: `benchmarks/bench_rule_detector.py`.
"""

from __future__ import annotations

MAX_QUOTE_CHARS = 240
MAX_PROMPT_CHARS = 4_000  # a pasted log is not where rules are stated

_LEAD = r"(?:(?:ok(?:ay)?|so|also|and|but|please|important|note|remember|rule|btw)[,:!]?\s+)*"
_START = (r"(?:always|never|don'?t|do\s+not|avoid|stop\s+\w+ing|no\s+more|from\s+now\s+on|going\s+forward|"
          r"in\s+(?:the\s+)?future|from\s+here\s+on|make\s+sure\s+(?:you\s+|to\s+)?always|"
          r"(?:you|we)\s+(?:must|should)\s+(?:always|never|not)|(?:you|we)\s+must|we\s+(?:always|never)|"
          r"(?:we|you)\s+(?:don'?t|do\s+not)\s+(?:use|add|commit|push|call|import|edit|touch|put|write|merge))\b")
_ANYWHERE = (r"(?:[:;(]|\s[-\u2013\u2014])\s*(?:always|never|do\s+not|don'?t)\s+[a-z]+|"
             r"\b(?:every|all|each)\s+[^,.;]{1,40}\s+must\b|\byou\s+must\b|"
             r"\b(?:from\s+now\s+on|going\s+forward|as\s+a\s+rule|every\s+time\s+you|whenever\s+you|"
             r"(?:we|you)\s+(?:use|prefer)\s+[^,.;]{1,40},?\s+(?:not|instead\s+of|rather\s+than|over)\s+|"
             r"^use\s+[^,.;]{1,40},?\s+(?:not|instead\s+of|rather\s+than)\s+)")
# Idioms, one-offs and reports that open like a rule but are not one.
_NOT_RULE = (r"(?:^(?:don'?t|do\s+not)\s+(?:worry|know|think|understand|see|get|have|remember|care|mind|bother)\b|"
             r"^never\s+mind\b|\b(?:for\s+now|yet|this\s+time|right\s+now|today|in\s+this\s+(?:pr|commit|branch|change))\b|"
             r"^(?:always|never)\s+(?:seems?|was|were|got|gets|worked|works|happened|returns?|fails?|shows?|been)\b)")


# Every pattern needs one of these words; a prompt with none skips compiling them (3.5 ms a fresh hook).
_TRIGGERS = ("always", "never", "don't", "dont", "do not", "avoid", "stop", "no more", "from now on", "forward",
             "future", "from here on", "must", "instead", "rather than", " over ", "as a rule", "every time",
             "whenever", "not ")


def _compiled():
    import re

    return (re.compile(rf"^{_LEAD}{_START}", re.I), re.compile(_ANYWHERE, re.I | re.M),
            re.compile(_NOT_RULE, re.I), re.compile(r"(?<=[.!?])\s+|\n+"))


def standing_rule(prompt: str) -> str | None:
    """The first sentence of `prompt` that states a standing rule, as the user wrote it; else None."""
    if not prompt or len(prompt) > MAX_PROMPT_CHARS:
        return None
    lowered = prompt.lower().replace("\u2019", "'")
    if not any(t in lowered for t in _TRIGGERS):
        return None
    start, anywhere, not_rule, split = _compiled()
    for raw in split.split(prompt):
        sentence = raw.strip().lstrip("-*•>0123456789.) ").strip()
        if len(sentence) < 8 or sentence.endswith("?") or "```" in sentence:
            continue
        plain = sentence.replace("\u2019", "'")  # a typographic apostrophe ("don’t") reads the same
        if not_rule.search(_strip_lead(plain)):
            continue
        if start.search(plain) or anywhere.search(plain):
            return sentence[:MAX_QUOTE_CHARS]  # as the user wrote it: the quote binds verbatim
    return None


def _strip_lead(sentence: str) -> str:
    import re

    return re.sub(rf"^{_LEAD}", "", sentence, flags=re.I)


def nudge(quote: str) -> str:
    """The one line the prompt hook adds when the user stated a rule."""
    return ("memory-custodian · the user may have just stated a standing rule: \u201c" + " ".join(quote.split()) +
            "\u201d. If it is one, record it once so every later session gets it: `memory_remember` with kind "
            "`directive` and the user's exact words as `quote` (or `memory-custodian remember --actor agent "
            "--kind directive --quote \"…\" TEXT`); skip this if it was a one-off.")
