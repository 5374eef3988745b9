"""Whether one sentence states a standing rule, the way people write rules: imperatives ("Prefer
dataclasses over hand-written `__init__`"), conditions ("When you add an endpoint, add its OpenAPI
entry too"), obligations stated as facts ("All migrations must be reversible", "This repo uses
poetry, not pip", "We squash commits before merging") and rules inside a sentence ("Make sure you
never commit secrets").

A task is an imperative too ("Add a --verbose flag to the export command"), so a verb that names a
one-off change counts only with a sign that it is meant to last: a condition on the agent's own work
("before committing", "when you add"), a quantifier ("all new features"), "your changes", a contrast
("X, not Y"), "always"/"never". Questions, one-off markers ("for now", "in this file"), reports of
what happened ("I always get this error", "it never returns") and log and error lines are not rules.
Word sets and plain string work, a few small patterns compiled on first use: this runs on every
prompt. Precision and recall on labelled real sentences: `benchmarks/bench_rule_detector.py`.
"""

from __future__ import annotations

import re
from itertools import pairwise


def _set(words: str) -> frozenset[str]:
    return frozenset(words.split())


# Imperatives that state a standing way of working on their own.
STANDING = _set(
    "use prefer avoid keep follow ensure limit favor favour stick maintain respect treat mimic match reuse be "
    "consider value cite trust group wrap separate validate verify handle assign define extract place store pass "
    "raise catch default adhere apply honor honour obey protect preserve minimize minimise maximize maximise "
    "target support mark mirror always never prioritize prioritise answer")
# Imperatives that usually ask for one change, a rule only with a sign that it lasts.
TASK = _set(
    "add fix rename refactor implement create update remove delete revert skip improve allow switch ignore modify "
    "show provide explain tell look investigate debug build install migrate move change replace upgrade bump merge "
    "open close review try run test check commit push deploy set enable disable convert split clean document "
    "include describe reference link give suggest start register rebuild restart fill launch generate regenerate "
    "record ship print log comment wait ask search find make do submit fork clone attach report drop prefix write "
    "read resolve retry call put return name annotate tag squash rebase sign pin lint format declare "
    "discuss flag prompt confirm double-check think trace verify stop work")
# Verbs whose bare plural object reads as a general practice ("Add comments for complex logic").
GENERIC_OBJECT = _set("add write include document handle test name comment log validate describe reference "
                      "link provide give report mark register annotate tag declare")
GENERIC_ADJ = _set("new clear descriptive meaningful concise short small proper detailed self-documenting clean "
                   "readable idiomatic explicit relevant related all any every each unit")
NOT_VERB = _set("the a an same been was were is are am said got had did gave went seems seemed this that these "
                "those it its my our your their his her to of in on at for with from by as")
BASE_ED = _set("need feed proceed embed exceed succeed seed shed speed")
# "don't worry", "never mind": idioms that open like a rule.
IDIOMS = _set("worry know think understand see get have care mind bother")
LEADS = _set("please also and so but ok okay then just btw hey kindly")
# Words before a modal that make it a report, a guess or a wish, not a rule.
REPORT_SUBJECT = _set("i i'm i've i'd i'll me it this that which there he she they maybe perhaps probably think "
                      "guess hopefully expected expect would hope wish feel believe seems")
MODALS = _set("must mustn't should shouldn't shall")
AFTER_MODAL_NOT_RULE = ("be able", "not have", "ship", "work", "be fixed", "be added", "now", "see", "get",
                        "probably", "be possible")
ACTIVITY_AFTER = _set("you your we our someone anyone any each every all new changes a")
CONDITIONS = _set("if when whenever after before once while unless until")
GENERIC_PHRASES = ("if needed", "if possible", "if necessary", "if applicable", "where possible", "where appropriate",
                   "where applicable", "when possible", "when necessary", "when needed", "whenever possible",
                   "as needed", "as appropriate", "in case of doubt", "when in doubt", "if in doubt", "at all times",
                   "unless necessary", "unless otherwise", "instead of", "rather than", "at least",
                   "as much as possible", "for every",
                   "every time", "each time")
STRONG_PHRASES = ("from now on", "going forward", "from here on", "as a rule",
                  "every time you", "whenever you", "make sure", "be sure to", "remember to", "don't forget to",
                  "in case of doubt", "when in doubt", "if in doubt", "is strongly advised", "is recommended to",
                  "it is recommended", "it is a strict requirement", "is a strict requirement",
                  "do not forget to", "no need to", "never ever", "at all costs", "in this repo", "in this project",
                  "in this codebase", "for this repo", "for this project", "in our repo", "in our codebase")
ONE_OFF = tuple(f" {m} " for m in (
    "for now", "for the time being", "this time", "right now", "just this once", "temporarily", "today", "tonight",
    "this morning", "this afternoon", "in this file", "in this pull request", "in this commit", "in this branch",
    "in this change", "in this function", "in this method", "in this test", "in this session", "in this diff",
    "this pr", "this issue", "this ticket", "this task", "for this one", "yet"))
_PUNCT = str.maketrans(",.;:!?()\"", "         ")
RULE_LABELS = frozenset(("remember", "rule", "rules", "convention", "conventions", "policy", "reminder", "golden rule",
                         "house rule", "note to self"))
# Labels of a report, a task or a change title (conventional commit types among them).
NOT_RULE_LABELS = frozenset(("current task", "task", "todo", "cause", "workaround", "example", "output", "error",
                             "warning", "result", "expected", "actual", "steps", "fixes", "closes", "actual behaviour",
                             "expected behaviour", "actual behavior", "expected behavior", "chore", "feat", "fix",
                             "docs", "refactor", "test", "tests", "ci", "build", "perf", "style", "revert", "wip"))
EMPHASIS = frozenset(("NEVER", "ALWAYS", "MUST", "SHOULD", "MANDATORY", "DON'T", "REQUIRED", "ALL"))
# "We recommend …", "We ask that you …": a project stating its rules in the first person plural.
WE_ASK = _set("recommend recommends suggest ask encourage advise require expect prefer")
SCOPES = _set("in for on during within inside across to")


PATTERNS = {
    # how a log or error line starts, and what one holds further on
    "log_head": r"(?:[\w.-]+\s+\|\s|(?:npm|yarn|pnpm)\s+(?:ERR!|WARN|notice|error|warn)|\d+\s+(?:verbose|info|timing|"
                r"silly|warn|error|http)\b|(?:ERROR|FATAL|WARN(?:ING)?|INFO|DEBUG|TRACE)(?=[\s:\]])|\$\s|>>>\s|"
                r"at\s+\S+\s+\(|(?:raise|def|class|import|from)\s|Traceback\b|File\s+\"|(?:Applying|Running|Creating|"
                r"Installing|Loading|Migrating|Compiling|Downloading|Building)\b.*(?:\.\.\.|\bOK\b))",
    "log_body": r"\w(?:Error|Exception|Warning)\b:|\b\d{1,2}:\d{2}:\d{2}\b|\b\d{4}-\d{2}-\d{2}T\d|"
                r"\[(?i:info|warn|warning|error|debug|notice)\]|exited with (?:status )?code|\bexit (?:status|code) \d",
    "words": r"[a-z0-9][a-z0-9'_-]*",
    "code": r"`[^`]*`|\[([^\]]*)\]\([^)]*\)|https?://\S+",
    "label": r"^([A-Za-z][\w /'()&-]{0,40}?)\s*:\s+(\S.*)$",
}
# What a line must hold or start with for `log_head` or `log_body` to match: most prose lines are
# ruled out without a pattern, so a plain prompt compiles none (each costs a fresh hook ~0.2 ms).
LOG_STARTS = ("npm ", "yarn ", "pnpm ", "ERROR", "FATAL", "WARN", "INFO", "DEBUG", "TRACE", "$ ", ">>> ", "at ",
              "raise ", "def ", "class ", "import ", "from ", "Traceback", "File \"", "Applying", "Running",
              "Creating", "Installing", "Loading", "Migrating", "Compiling", "Downloading", "Building")
_COMPILED: dict = {}


def pattern(name: str):
    """The compiled pattern `name` of PATTERNS, compiled on first use."""
    found = _COMPILED.get(name)
    if found is None:
        found = _COMPILED[name] = re.compile(PATTERNS[name])
    return found


def starts_like_log(line: str) -> bool:
    """A line that opens like a log or error line, a stack frame or a shell transcript."""
    line = line.strip()
    return ("|" in line or line[:1].isdigit() or line.startswith(LOG_STARTS)) and bool(pattern("log_head").match(line))


def looks_like_log(text: str) -> bool:
    """Log or error text: a line that opens like one, or a sentence holding an error, a time stamp or
    an exit status (what a pasted error looks like)."""
    text = text.strip()
    if starts_like_log(text):
        return True
    return (":" in text or "[" in text or "exit" in text) and pattern("log_body").search(text) is not None


def is_rule(sentence: str) -> bool:
    """Whether `sentence` (one sentence, as written) states a standing rule."""
    text = sentence.strip().replace("\u2019", "'").replace("**", "").replace("__", "")
    text = text.lstrip("\u2705\u274c\u2714\u2611\u2713 ").strip()
    if len(text) < 8 or text.endswith("?") or looks_like_log(text):
        return False
    if any(w in EMPHASIS for w in text.replace(",", " ").replace(":", " ").split()) or "DO NOT" in text:
        return True  # shouted words are how rule files mark their strictest rules
    plain = pattern("code").sub(lambda m: m.group(1) or "code", text) if "`" in text or "](" in text or "://" in text else text
    low = " " + " ".join(plain.lower().translate(_PUNCT).split()) + " "
    if any(marker in low for marker in ONE_OFF):
        return False
    if "(" in plain and any(f"({w} " in plain.lower() for w in ("do not", "don't", "never", "always", "must")):
        return True  # "(do not edit manually)" after a path or a command
    found = pattern("label").match(plain) if ":" in plain else None
    if found:
        head = found.group(1).strip().lower()
        if head in RULE_LABELS:
            return True
        if head.split("(")[0] in NOT_RULE_LABELS:
            return False
        head_words = _tokens(head)
        if head_words and head_words[0] in TASK and len(head_words) > 1:
            return False  # "Improve upgrade error: tell users to downgrade" is the title of a change
        if len(head_words) <= 5 and _statement(found.group(2), scoped=True):
            return True
    return _statement(plain)


def _statement(text: str, *, scoped: bool = False) -> bool:
    """Whether a sentence (inline code already replaced) states a rule, clause by clause; `scoped`: it
    follows a label that names where it applies ("Python-only changes: run …")."""
    low = " " + " ".join(text.lower().split()) + " "
    if any(p in low for p in STRONG_PHRASES):
        return not low.lstrip().startswith(("i ", "i'm ", "we're "))
    clauses = [c for c in _clauses(low) if c.strip()]
    return any(_clause(c, cue=scoped and i == 0) for i, c in enumerate(clauses))


def _clauses(low: str) -> list[str]:
    for sep in (";", " — ", " – ", "—", " -- ", " - "):
        low = low.replace(sep, "\n")
    return low.split("\n")


def _tokens(text: str) -> list[str]:
    return pattern("words").findall(text)


def _clause(clause: str, *, cue: bool = False) -> bool:
    words = _lead_stripped(_tokens(clause))
    if not words:
        return False
    if words[0] in CONDITIONS or words[:3] == ["in", "order", "to"] or words[:2] == ["in", "case"]:
        return _conditional(clause, words)
    if words[0] in SCOPES and "," in clause:
        # "In tests, use …", "For bug fixes, document …", "To avoid rework, stick to …"
        head, _, main = clause.partition(",")
        general = not any(w in ("the", "this", "that", "my") for w in _tokens(head))
        main_words = _lead_stripped(_tokens(main))
        if main_words and len(_tokens(head)) <= 12 and _imperative(main_words, main, cue=general):
            return True
    if _imperative(words, clause, cue=cue):
        return True
    return _modal(words) or _convention(words, clause)


def _lead_stripped(words: list[str]) -> list[str]:
    """Without "please", "also", "instead" and the like, and without an adverb before the verb
    ("Continuously update …")."""
    while words and (words[0] in LEADS or words[0] == "instead" or (words[0].endswith("ly") and len(words) > 1
                                                                    and words[0] not in ("only", "apply", "reply"))):
        words = words[1:]
    if words[:2] in (["try", "to"], ["remember", "to"], ["be", "sure"]):
        words = words[2:] if words[1] == "to" else words[3:]
    return words


def _conditional(clause: str, words: list[str]) -> bool:
    """"If/When/After …, <imperative>": a rule when the main clause tells the reader what to do."""
    head, comma, main = clause.partition(",")
    if not comma:
        # "When adding a new test:" opens a list of rules; "When I run it I get:" reports
        cond = _tokens(head)
        return head.rstrip().endswith(":") and len(cond) > 1 and (cond[1] == "you" or cond[1].endswith("ing"))
    main_words = _lead_stripped(_tokens(main))
    if not main_words:
        return False
    if _imperative(main_words, main, cue=True):
        return True
    return main_words[0] == "you" and len(main_words) > 1 and main_words[1] in ("must", "should", "need", "have")


def _base_form(word: str) -> bool:
    if word in NOT_VERB or not word.isalpha():
        return False
    if word.endswith("ed") and word not in BASE_ED:
        return False
    return not (word.endswith("s") and not word.endswith("ss"))


def _imperative(words: list[str], text: str, *, cue: bool = False) -> bool:
    verb, rest = words[0], words[1:]
    if verb in ("do", "does") and rest[:1] in (["not"], ["n't"]):
        verb, rest = "don't", rest[1:]
    if verb in ("don't", "dont", "never"):
        if not rest or rest[0] in IDIOMS or (verb == "never" and rest[0] == "mind"):
            return False
        return _base_form(rest[0]) or rest[0] in ("ever", "use")
    if verb == "always":
        return bool(rest) and _base_form(rest[0])
    if verb == "only":
        return bool(rest) and (rest[0] in STANDING or rest[0] in TASK)
    if verb == "stop" and rest and rest[0].endswith("ing"):
        return True
    if verb in ("no", "avoid") and rest[:1] == ["more"]:
        return True
    if verb in STANDING:
        return verb != "be" or (bool(rest) and rest[0] not in NOT_VERB)
    if verb not in TASK:
        return False
    return cue or _lasting(words, text)


def _lasting(words: list[str], text: str) -> bool:
    """Signs that a task-like imperative is meant for every time, not this once."""
    low = " " + " ".join(text.split()) + " "
    if any(p in low for p in GENERIC_PHRASES) or ", not " in low or ", never " in low:
        return True
    for i, word in enumerate(words[:12]):  # the verb's own phrase, not a description further on
        nxt = words[i + 1] if i + 1 < len(words) else ""
        if word in CONDITIONS and i > 0 and (nxt in ACTIVITY_AFTER or (nxt.endswith("ing") and len(nxt) > 5)):
            return True
        if word in ("always", "never", "your", "every", "each", "whenever", "only"):
            return True
        if word == "new" and i > 0 and words[i - 1] not in ("a", "the", "this", "that", "my"):
            return True
    verb, obj = words[0], words[1] if len(words) > 1 else ""
    if verb in GENERIC_OBJECT and obj and not any(w in ("the", "this", "that", "these", "those", "my") for w in words):
        return obj in GENERIC_ADJ or (obj.endswith("s") and not obj.endswith(("ss", "us", "is")) and obj.isalpha())
    return False


def _modal(words: list[str]) -> bool:
    """"All migrations must be reversible", "Tests should be independent", "Only maintainers may tag"."""
    for i, word in enumerate(words[:14]):
        subject, after = words[:i], words[i + 1:]
        if word in MODALS or (word in ("may", "can") and subject[:1] == ["only"]) or (
                word == "may" and after[:1] in (["only"], ["not"])):
            break
        if word in ("need", "needs", "require", "requires") and i <= 6 and subject and subject[0] in (
                "every", "all", "each", "any", "new"):
            return True
        if word in ("has", "have") and after[:1] == ["to"] and subject:
            break
    else:
        return False
    if not subject or any(w in REPORT_SUBJECT for w in subject) or len(subject) > 10:
        return False
    if subject == ["we"] and word in ("should", "shouldn't") and after[:1] not in (["always"], ["never"]):
        return False  # "we should provide an alert": a proposal
    if after[:1] == ["have"] and (word.startswith("should") or after[1:2] == ["been"] or (
            len(after) > 1 and after[1].endswith(("ed", "en")))):
        return False  # "should have merged", "must have failed": a past that went wrong, or a guess
    tail = " ".join(after[:3])
    if word.startswith("must") and tail.startswith("be added"):
        return True
    return not any(tail == p or tail.startswith(p + " ") for p in AFTER_MODAL_NOT_RULE) and bool(after)


def _convention(words: list[str], clause: str) -> bool:
    """Obligations stated as facts: "We squash commits before merging", "This repo uses poetry, not pip",
    "Parsers go in src/parsers/", "Unit tests follow the TestFeatureName pattern"."""
    low = " " + clause + " "
    if words[0] == "this" and words[1:2] in (["repo"], ["project"], ["codebase"], ["repository"], ["team"]):
        words = ["we", *words[2:]]  # "This repo uses poetry, not pip" says what "we use" says
    if words[0] in REPORT_SUBJECT:
        return False
    if (", not " in low or ", never " in low) and any(w in ("use", "uses", "prefer", "prefers", "explain", "explains")
                                                       for w in words[:8]):
        return True
    if words[0] == "we" and len(words) > 2:
        if words[1] in WE_ASK or (words[1] == "also" and words[2] in WE_ASK):
            return True
        if words[1] in ("always", "never") and words[2] not in ("look", "welcome", "appreciate"):
            return True
        if words[1] in ("don't", "do") and (words[1] == "don't" or words[2] == "not"):
            return True
        return _base_form(words[1]) and any(w in ("before", "after") and (n.endswith("ing") or n in ACTIVITY_AFTER)
                                            for w, n in pairwise(words))
    for i, word in enumerate(words[1:12], 1):
        nxt = words[i + 1] if i + 1 < len(words) else ""
        if word in ("belong", "belongs") and nxt == "in":
            return True
        if word in ("go", "goes") and nxt in ("in", "on", "into", "under"):
            return True
        if word in ("follow", "follows") and any(w in ("pattern", "format", "convention", "conventions", "naming",
                                                      "style") for w in words[i:]):
            return True
        if word in ("is", "are") and words[i + 1:i + 4] == ["not", "meant", "to"]:
            return True
    return False
