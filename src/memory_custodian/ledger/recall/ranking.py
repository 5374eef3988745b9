"""The knobs of recall ranking, in one place: tokenising, the MATCH query, BM25 weights, priors.

Ranking is BM25 over the FTS5 columns times small priors for priority and kind, plus a lift for
notes anchored near the paths a task touches. Provenance never enters a score: trust changes
how a note is framed, not where it ranks. Changing the tokenizer or `subtokens` changes
`INDEX_SIGNATURE`, which makes the index rebuild itself.

Every knob below was tuned on the train split of `benchmarks/recall/` and kept only because it
raised recall@10 on the held-out test split; `benchmarks/bench_recall.py` prints that history,
including the changes that were measured and rejected.
"""

from __future__ import annotations

import re
from functools import lru_cache

FTS_TOKENIZE = "porter unicode61 remove_diacritics 2"
INDEX_SIGNATURE = "fts=porter-unicode61-rd2;subtokens=2"

# Column order is the FTS table's: title, body, tags_text, paths_text, subtokens.
FTS_COLUMNS = ("title", "body", "tags_text", "paths_text", "subtokens")
COLUMN_WEIGHTS = {"title": 3.0, "body": 1.0, "tags_text": 4.0, "paths_text": 3.0, "subtokens": 3.0}

# Multiplicative priors: score = bm25 * (1 + priority + kind) * (1 + PATH_LIFT if near a touched path).
# Directives are rules that must hold, so a task that would break one should see it; task
# checkpoints are many and short-lived, so they yield to the notes that explain the code.
PRIORITY_PRIOR = {"high": 0.1, "medium": 0.0, "low": -0.15}
KIND_PRIOR = {"directive": 0.4, "gotcha": 0.15, "decision": 0.10, "finding": 0.0, "task": -0.25,
              "reference": 0.0, "operational": 0.0}
PATH_LIFT = 0.5

# Without a query: priority first, then recency.
PRIORITY_ORDER = {"high": 0, "medium": 1, "low": 2}

STOPWORDS = frozenset(
    ["a", "an", "and", "are", "as", "at", "be", "but", "by", "can", "do", "does", "for", "from", "has", "have", "how",
     "i", "if", "in", "into", "is", "it", "its", "me", "my", "no", "not", "of", "on", "or", "our", "should", "so",
     "that", "the", "their", "them", "then", "there", "these", "they", "this", "to", "was", "we", "were", "what",
     "when", "where", "which", "who", "why", "will", "with", "you", "your"]
)
# Query side only (what is indexed never changes): the auxiliaries, light verbs and fillers a
# question in natural language carries ("When did Priya get a car?"), which match most notes of
# a conversation and say nothing of what is asked.
LIGHT_WORDS = frozenset(
    ["am", "been", "being", "did", "doing", "done", "get", "gets", "getting", "got", "go", "goes", "going", "gone",
     "went", "had", "having", "would", "could", "may", "might", "must", "shall", "ever", "still", "now", "recently",
     "lately", "just", "also", "any", "some", "much", "many", "very", "really", "about", "after", "before", "during",
     "since", "until", "than", "too", "us", "he", "him", "his", "she", "her", "hers"]
)
QUERY_STOPWORDS = STOPWORDS | LIGHT_WORDS

# Irregular English word forms the porter stemmer leaves apart (`swim`/`swam`, `buy`/`bought`): a
# query word also matches its other forms. Grammar, not vocabulary: no domain's words.
USE_WORD_FORMS = True
WORD_FORMS: tuple[tuple[str, ...], ...] = tuple(tuple(g.split("/")) for g in [
    "arise/arose/arisen", "awake/awoke/awoken", "bear/bore/born", "beat/beaten", "become/became", "begin/began/begun",
    "bend/bent", "bet", "bind/bound", "bite/bit/bitten", "bleed/bled", "blow/blew/blown", "break/broke/broken",
    "breed/bred", "bring/brought", "build/built", "burn/burnt", "buy/bought", "catch/caught", "choose/chose/chosen",
    "come/came", "cost", "creep/crept", "cut", "deal/dealt", "dig/dug", "draw/drew/drawn", "dream/dreamt",
    "drink/drank/drunk", "drive/drove/driven", "eat/ate/eaten", "fall/fell/fallen", "feed/fed", "feel/felt",
    "fight/fought", "find/found", "flee/fled", "fly/flew/flown", "forbid/forbade/forbidden",
    "forget/forgot/forgotten", "forgive/forgave/forgiven", "freeze/froze/frozen", "give/gave/given", "grind/ground",
    "grow/grew/grown", "hang/hung", "hear/heard", "hide/hid/hidden", "hit", "hold/held", "hurt", "keep/kept",
    "kneel/knelt", "know/knew/known", "lay/laid", "lead/led", "leap/leapt", "learn/learnt", "leave/left", "lend/lent",
    "let", "lie/lay/lain", "light/lit", "lose/lost", "make/made", "mean/meant", "meet/met", "pay/paid",
    "prove/proven", "put", "quit", "read", "ride/rode/ridden", "ring/rang/rung", "rise/rose/risen", "run/ran",
    "say/said", "see/saw/seen", "seek/sought", "sell/sold", "send/sent", "set", "sew/sewn", "shake/shook/shaken",
    "shine/shone", "shoot/shot", "show/shown", "shrink/shrank/shrunk", "shut", "sing/sang/sung", "sink/sank/sunk",
    "sit/sat", "sleep/slept", "slide/slid", "speak/spoke/spoken", "speed/sped", "spend/spent", "spin/spun", "split",
    "spread", "spring/sprang/sprung", "stand/stood", "steal/stole/stolen", "stick/stuck", "sting/stung",
    "stink/stank", "strike/struck", "swear/swore/sworn", "sweep/swept", "swim/swam/swum", "swing/swung",
    "take/took/taken", "teach/taught", "tear/tore/torn", "tell/told", "think/thought", "throw/threw/thrown",
    "understand/understood", "wake/woke/woken", "wear/wore/worn", "weave/wove/woven", "weep/wept", "win/won",
    "wind/wound", "write/wrote/written", "child/children", "man/men", "woman/women", "person/people", "foot/feet",
    "tooth/teeth", "mouse/mice", "wife/wives", "life/lives", "knife/knives", "leaf/leaves", "half/halves",
] if "/" in g)
# In a file name the query names (`logging.py`), the extension alone matches nearly every note
# anchored to such a file: it adds cost and noise, never precision, so it is dropped there.
FILE_EXTENSIONS = frozenset([
    "py", "pyi", "ts", "tsx", "js", "jsx", "mjs", "md", "json", "yaml", "yml", "toml", "txt", "go", "rs", "java",
    "kt", "rb", "sh", "css", "scss", "html", "sql", "tf", "cfg", "ini", "lock", "xml",
])
DROP_EXTENSIONS = True

# The notes a query matches are re-ranked by the words a general English thesaurus relates to its
# words (`query_expand.py`): their BM25 is added at this weight, shared among the query's terms past
# the first (`query_expand.build_expansion`). Full-account callers only.
USE_EXPANSION = True
EXPANSION_WEIGHT = 0.25

# Words inside a run of CJK text match through its character bigrams (`cjk_grams`, indexed in the
# subtokens column): without them, only a whole run or its beginning was found.
USE_CJK_GRAMS = True

# Paths a caller passes also match notes anchored there, even with no query word in common.
MATCH_PATHS = True

# Query expansion: a term also matches the other words of its group. Generic software vocabulary
# only (no project's domain words), because a symptom is rarely worded the way its cause was.
USE_SYNONYMS = True
SYNONYM_CAP = 3  # at most this many expansions a term (0 = its whole group): more adds noise
SYNONYM_GROUPS: tuple[tuple[str, ...], ...] = (
    ("hang", "hangs", "freeze", "freezes", "frozen", "stuck", "deadlock", "deadlocks", "blocked", "blocks"),
    ("slow", "slowness", "latency", "sluggish", "performance", "faster", "speed", "p95", "timeout", "timeouts"),
    ("crash", "crashes", "exception", "error", "errors", "fails", "failure", "traceback", "broken", "breaks"),
    ("credential", "credentials", "secret", "secrets", "key", "keys", "token", "tokens", "password", "passwords"),
    ("login", "logins", "signin", "signed", "logout", "session", "sessions", "auth", "authentication"),
    ("email", "emails", "mail", "mailer", "smtp"),
    ("memory", "ram", "oom", "leak", "leaks"),
    ("duplicate", "duplicates", "twice", "double", "idempotent", "idempotency", "again"),
    ("timezone", "tz", "utc", "naive", "aware", "clock"),
    ("flaky", "flake", "intermittent", "intermittently", "sometimes", "randomly"),
    ("translation", "translations", "i18n", "localization", "localisation", "locale", "localizing", "language"),
    ("config", "configuration", "settings", "setting", "env", "environment", "variable", "variables"),
    ("deploy", "deployment", "release", "rollout", "ship", "production", "prod"),
    ("database", "db", "postgres", "sql", "query", "queries", "table", "tables"),
    ("test", "tests", "testing", "spec", "fixture", "fixtures", "ci", "pipeline"),
    ("cost", "costs", "expensive", "bill", "price", "pricing", "budget"),
    ("queue", "job", "jobs", "worker", "workers", "background", "async", "task", "tasks"),
    ("cache", "cached", "caching", "memoise", "memoize", "memoised"),
    ("upload", "uploads", "import", "imports", "spreadsheet", "csv", "file", "files"),
    ("encoding", "charset", "utf", "unicode", "garbled", "mangled", "accented", "characters"),
    ("sort", "sorting", "order", "ordering", "collation"),
    ("page", "pages", "pagination", "cursor", "paging"),
    ("log", "logs", "logging", "logged", "logger"),
    ("dependency", "dependencies", "upgrade", "bump", "version", "pin", "pinned", "library"),
    ("race", "concurrency", "concurrent", "thread", "threads", "parallel"),
    ("rounding", "cent", "cents", "decimal", "float", "money", "amount", "amounts", "totals"),
    ("tenant", "tenants", "customer", "customers", "account", "accounts", "company"),
    ("silent", "silently", "swallow", "swallows", "ignored", "hidden"),
    ("large", "huge", "big", "oversized"),
    ("cpu", "profiling", "profile", "hotspot"),
    ("http", "request", "requests", "api", "upstream", "provider", "external"),
    ("delete", "remove", "cleanup", "clean"),
    ("schedule", "scheduled", "periodic", "cron", "nightly"),
    ("container", "image", "docker", "dockerfile"),
    ("pod", "pods", "replicas", "kubernetes", "k8s", "scaling", "autoscale"),
    ("region", "aws", "cloud"),
    ("review", "reviewer", "reviewers", "approval", "approve", "approvals"),
)

_WORD_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_]*")
_IDENT_RE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_./-]*[A-Za-z0-9_]")
_SEP_RE = re.compile(r"[_./-]+")
_RUN_RE = re.compile(r"[A-Za-z0-9_./-]{3,}")
_COMPOUND_RE = re.compile(r"[a-z0-9][A-Z]|[A-Za-z0-9][_./-]+[A-Za-z0-9]")
_CAMEL_RE = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")


@lru_cache(maxsize=65536)
def split_identifier(ident: str) -> tuple[str, ...]:
    """`workspaceLock_v2` -> (workspace, lock, v, 2); `src/a/b.py` -> (src, a, b, py)."""
    parts: list[str] = []
    for piece in _SEP_RE.split(ident):
        parts.extend(m.group(0).lower() for m in _CAMEL_RE.finditer(piece))
    return tuple(p for p in parts if p)


@lru_cache(maxsize=65536)
def _compound_parts(run: str) -> tuple[str, ...]:
    """The parts of a word that splits (camelCase, snake_case, a/b.py, kebab-case), else ()."""
    if not _COMPOUND_RE.search(run):
        return ()
    parts = split_identifier(run.strip("_./-"))
    return parts if len(parts) > 1 else ()


def subtokens(title: str, body: str, tags, paths) -> str:
    """Extra tokens: camelCase parts and the joined form of compounds, for code-aware matching, and
    the character bigrams of text in scripts written without spaces (`cjk_grams`)."""
    out: list[str] = []
    seen = set()
    text = "\n".join([title, body, *tags, *paths])
    for run in _RUN_RE.findall(text):
        parts = _compound_parts(run)
        if not parts:
            continue
        for tok in (*parts, "".join(parts)):
            if tok not in seen:
                seen.add(tok)
                out.append(tok)
    if USE_CJK_GRAMS and not text.isascii():
        for tok in cjk_grams(text, index=True):
            if tok not in seen:
                seen.add(tok)
                out.append(tok)
    return " ".join(out)


# Words in other scripts: FTS5's unicode61 indexes runs of letters and digits of any script
# (folding case and diacritics), so a run is passed on whole and quoted, and FTS5 tokenizes it
# as it did the notes. Scripts written without spaces (Chinese, Japanese, Thai, ...) make a whole
# run between punctuation one token: their words also match as a prefix of such a run.
_NO_SPACE_RANGES = ((0x0E00, 0x0EFF), (0x1000, 0x109F), (0x1780, 0x17FF), (0x3040, 0x30FF), (0x31F0, 0x31FF),
                    (0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xAC00, 0xD7AF), (0xF900, 0xFAFF), (0xFF66, 0xFF9F),
                    (0x20000, 0x3134F))


def _no_space_char(ch: str) -> bool:
    o = ord(ch)
    return o > 0xDFF and any(lo <= o <= hi for lo, hi in _NO_SPACE_RANGES)


def cjk_grams(text: str, index: bool = False) -> list[str]:
    """The character bigrams of each stretch of `text` in a script written without spaces, in order.

    unicode61 indexes such a stretch, up to the next punctuation, as one token, so a word inside
    it (`自行车` in `我昨天买了一辆自行车`) matched nothing. Bigrams are what CJK search engines index
    (Lucene's CJK analyzer): a word of two or more characters is then a run of its bigrams. `index`:
    also each stretch's last character alone, so that a one-character query matches as a prefix."""
    out: list[str] = []
    stretch: list[str] = []
    for ch in text + " ":
        if _no_space_char(ch):
            stretch.append(ch)
            continue
        if stretch:
            out.extend(stretch[i] + stretch[i + 1] for i in range(len(stretch) - 1))
            if index or len(stretch) == 1:
                out.append(stretch[-1])
            stretch = []
    return out


def _word_char(ch: str) -> bool:
    """A character of a word outside ASCII: a letter, digit or mark of any script, or private use.
    Marks count so a word is never cut where unicode61 would not cut it (quoting keeps any cut)."""
    import unicodedata

    cat = unicodedata.category(ch)
    return cat[0] in "LNM" or cat == "Co"


def no_space(term: str) -> bool:
    """Whether `term` holds a character of a script written without spaces between words."""
    return not term.isascii() and any(lo <= ord(ch) <= hi for ch in term for lo, hi in _NO_SPACE_RANGES)


def _idents(query: str):
    """(identifier, its parts) in order: `_IDENT_RE`'s matches split by `split_identifier`, and in a
    query with other scripts, also the runs of their letters (a part is one such word)."""
    if query.isascii():
        for m in _IDENT_RE.finditer(query):
            yield m.group(0), split_identifier(m.group(0))
        return
    run: list[str] = []
    for ch in query + " ":
        if (ch.isascii() and (ch.isalnum() or ch in "_./-")) or (not ch.isascii() and _word_char(ch)):
            run.append(ch)
            continue
        text, run = "".join(run), []
        if text.isascii():
            for m in _IDENT_RE.finditer(text):
                yield m.group(0), split_identifier(m.group(0))
            continue
        parts: list[str] = []
        for piece in _SEP_RE.split(text):
            # as written: FTS5 folds case itself, and its tables are not Python's (`str.lower`)
            parts.extend(split_identifier(piece) if piece.isascii() else (piece,))
        if parts:
            yield text, tuple(parts)


def iter_terms(query: str):
    """The query's terms, first occurrence first, without stop words: identifier parts and their
    joined form. A generator, so a caller looking for a few of them can stop early."""
    seen: set[str] = set()
    for ident, parts in _idents(query or ""):
        cands = list(parts) + (["".join(parts)] if len(parts) > 1 else [])
        if DROP_EXTENSIONS and len(parts) > 1 and "." in ident and parts[-1] in FILE_EXTENSIONS:
            cands.remove(parts[-1])  # the joined form (`loggingpy`) still pins the file
        # light words are dropped from prose only: the `get` of `get_user` names code
        stop = STOPWORDS if len(parts) > 1 else QUERY_STOPWORDS
        for tok in cands:
            if tok not in seen and tok not in stop:
                seen.add(tok)
                yield tok


def query_terms(query: str) -> list[str]:
    """`iter_terms`, or when the query is nothing but stop words, its words."""
    terms = list(iter_terms(query))
    if not terms:
        for m in _WORD_RE.finditer(query or ""):
            tok = m.group(0).lower()
            if tok not in terms:
                terms.append(tok)
    return terms


def _crude_stem(word: str) -> str:
    for suffix in ("ing", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


_SYNONYMS: dict[str, tuple[str, ...]] = {}
_SYNONYMS_FROM: object = None


def synonyms(term: str) -> tuple[str, ...]:
    """The other words of `term`'s group(s), looked up as written and by a crude stem."""
    global _SYNONYMS, _SYNONYMS_FROM
    if _SYNONYMS_FROM is not SYNONYM_GROUPS:  # rebuilt when a benchmark swaps the groups
        table: dict[str, list[str]] = {}
        for group in SYNONYM_GROUPS:
            for word in group:
                for key in {word, _crude_stem(word)}:
                    bucket = table.setdefault(key, [])
                    bucket.extend(w for w in group if w != word and w not in bucket)
        _SYNONYMS = {k: tuple(v) for k, v in table.items()}
        _SYNONYMS_FROM = SYNONYM_GROUPS
    return _SYNONYMS.get(term) or _SYNONYMS.get(_crude_stem(term)) or ()


_FORMS: dict[str, tuple[str, ...]] = {}
_FORMS_FROM: object = None


def word_forms(term: str) -> tuple[str, ...]:
    """The other forms of an irregular word (`bought` for `buy`), or ()."""
    global _FORMS, _FORMS_FROM
    if _FORMS_FROM is not WORD_FORMS:
        _FORMS = {w: tuple(x for x in g if x != w) for g in WORD_FORMS for w in g}
        _FORMS_FROM = WORD_FORMS
    return _FORMS.get(term, ())


def capped_synonyms(term: str) -> tuple[str, ...]:
    syns = synonyms(term)
    return syns[:SYNONYM_CAP] if SYNONYM_CAP else syns


# A query that names a symbol or a file (`InvoiceBuilder`, `invoice.py`) is already precise:
# expanding its other words only lets look-alikes outrank the note about that code.
PRECISE_NO_SYNONYMS = True


def names_code(query: str) -> bool:
    return any(_compound_parts(run) for run in _RUN_RE.findall(query or ""))


def match_words(query: str) -> list[tuple[str, bool]]:
    """The words the broad MATCH ORs together, in order: the query's terms, then their synonyms;
    each with whether it also matches as a prefix."""
    terms = query_terms(query)
    words: list[tuple[str, bool]] = []
    seen: set[str] = set()

    def add(tok: str) -> None:
        if tok not in seen:
            seen.add(tok)
            words.append((tok, no_space(tok)))

    for tok in terms:
        add(tok)
    if USE_CJK_GRAMS:
        for tok in terms:
            if no_space(tok):
                for gram in cjk_grams(tok):
                    if gram not in seen:  # a one-character word: a prefix of the grams it starts
                        seen.add(gram)
                        words.append((gram, len(gram) == 1))
    if USE_WORD_FORMS:
        for tok in terms:
            for form in word_forms(tok):
                add(form)
    if USE_SYNONYMS and not (PRECISE_NO_SYNONYMS and names_code(query)):
        for tok in terms:
            for syn in capped_synonyms(tok):
                for piece in split_identifier(syn):
                    add(piece)
    return words


def build_match(query: str, paths=(), words=None) -> str | None:
    """An FTS5 MATCH expression: any of the query's terms, each quoted (no query syntax leaks in),
    their synonyms, and with `paths` (the caller's path filter) a phrase on the paths column for
    each, so a note anchored there matches even when it shares no word with the task. `words`:
    `match_words(query)`, when the caller has it already."""
    words = match_words(query) if words is None else words
    if not words:
        return None
    parts = [_quote(tok) + ("*" if prefix else "") for tok, prefix in words]
    return " OR ".join(parts + path_phrases(paths))


def path_phrases(paths) -> list[str]:
    """The MATCH phrases (last in `build_match`, in this order) that find notes anchored at `paths`."""
    out = []
    if MATCH_PATHS:
        for path in paths or ():
            # the phrase goes through the column's own tokenizer, so it matches the stored path
            words = " ".join(w for w in re.split(r"[^A-Za-z0-9\x80-\U0010ffff]+", path) if w)
            if words:
                out.append("paths_text : " + _quote(words))
    return out


# Broad queries on big ledgers: BM25 costs a few microseconds per matching note (and FTS5 reads
# every query phrase's whole doclist once for its IDF), so on a ledger of TIER_MIN_NOTES or more,
# when the query matches more than CANDIDATE_LIMIT notes, only a narrower tier is ranked (all
# terms but one, all terms, then all terms in the title or tags) provided it still fills the
# page. The counts then cover that tier; the notes that share only some of the words are
# reported as such (`partial`), as a lower bound when the broad tier was not counted in full.
CANDIDATE_LIMIT = 500
FILTERED_CANDIDATE_LIMIT = 3000  # the same with kind/tag/path filters, which then drop most of a tier
# The broad tier of such a query is counted up to this many notes (0: up to CANDIDATE_LIMIT, which
# the choice of tier needs anyway); past it, how many share only some of the words is reported as
# a lower bound (`at least N`), never silently as exact. A higher cap buys a tighter bound for
# ~0.1 ms per thousand notes.
BROAD_COUNT_CAP = 0
MAX_TIER_PHRASES = 12  # an all-but-one tier repeats each word: BM25 costs grow with the phrases it holds
TIER_MIN_NOTES = 10000  # smaller ledgers always rank the broad tier in full (exact BM25; see note-7)
# The candidate cut, when no tier is both small and full (a prose prompt of six common words matched
# 66% of 74,900 notes, and its every-word tier five): the candidates are the notes that hold every
# unit of the query but one, else every unit but two, ... (one AND query per combination: FTS5
# intersects doclists by seeking, ~1 ms each), taking the first level with at least CUT_MIN notes;
# only they are scored, on the broad MATCH itself, so each keeps the very score that ranking the
# broad tier in full gives it (`recall_plan.cut_candidates`; measured in docs/performance.md).
USE_CUT = True
# The recalls that use it: the prompt hook's ("matched": the top lines above a floor, and how many
# more matched). A full-account recall (the CLI, MCP, `eval`) ranks exactly: with the cut, the
# software truth set's held-out recall@10 among 74,900 distractors fell 0.612 -> 0.576 (notes that
# share one common word of the query, many times, in their title and tags: `benchmarks/bench_cut.py`).
CUT_ACCOUNTING = ("matched",)
CUT_MIN = 100
CUT_RARE_MAX = 1000  # notes holding the query's rarest units, all of them candidates
CUT_MAX = 2000  # a level past this many notes ends the search: the level before it, or the tier in full
CUT_QUERIES_MAX = 40  # AND queries at most (a query of 8 units: every one, all but one, all but two)


def _quote(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def phrase(term: str) -> str:
    """A tier's unit: quoted, and for scripts without spaces a prefix, or all of its bigrams (as in
    `match_words`)."""
    if not no_space(term):
        return _quote(term)
    grams = [g for g in dict.fromkeys(cjk_grams(term)) if len(g) > 1] if USE_CJK_GRAMS else []
    if not grams or grams == [term]:
        return _quote(term) + "*"
    return f"({_quote(term)}* OR ({' AND '.join(_quote(g) for g in grams)}))"


# The score, bigger is better: BM25 (FTS5's bm25() negated) * the note's prior * the path lift.
# It has two forms: `score` in Python, for scans that rank in memory, and `score_sql`, for SQLite to
# rank inside a query. They run the same float operations in the same order, so they give the same
# bits; `tests/test_ledger_scoring.py` holds them equal on every query and corpus of the suite.


def prior(priority: str, kind: str) -> float:
    """A note's multiplicative prior: 1 + its priority's + its kind's."""
    return 1.0 + float(PRIORITY_PRIOR.get(priority, 0.0)) + float(KIND_PRIOR.get(kind, 0.0))


def score(bm25: float, note_prior: float, near: bool | None = None) -> float:
    """`bm25` positive; `near`: whether the note is anchored near a touched path (None: no paths given)."""
    s = bm25 * note_prior
    return s if near is None else s * (1.0 + PATH_LIFT * near)


def _case(column: str, table: dict) -> str:
    arms = " ".join(f"WHEN '{k}' THEN {float(v)!r}" for k, v in sorted(table.items()))
    return f"(CASE {column} {arms} ELSE 0.0 END)"


def score_sql(bm25_expr: str, path_hit_expr: str | None) -> str:
    """`score` in SQL over `notes n` (FTS5's bm25() is negative: smaller is better)."""
    note_prior = f"(1.0 + {_case('n.priority', PRIORITY_PRIOR)} + {_case('n.kind', KIND_PRIOR)})"
    lift = f" * (1.0 + {PATH_LIFT!r} * ({path_hit_expr}))" if path_hit_expr else ""
    return f"(-({bm25_expr}) * {note_prior}{lift})"


def bm25_weights() -> tuple[float, ...]:
    return tuple(COLUMN_WEIGHTS[c] for c in FTS_COLUMNS)


def bm25_sql() -> str:
    """FTS5's bm25() over the index with the column weights."""
    return f"bm25(notes_fts, {', '.join(repr(w) for w in bm25_weights())})"
