"""`Memory`: the one object the CLI, the MCP server and the hooks open and call.

Each method is a short call into the module that does the work (the curated tier's read and
write paths, the ledger's notes and its text forms), imported on first use, so opening a Memory
(hooks do it on every prompt) costs nothing for what is not run. What every caller must get
lives here once: after each ledger write the export mirror is kept in step (at once, or
debounced in a long-lived process), and a mirror that could not be re-rendered is the write's
`mirror_warning`, never a failure of the write.
"""

from __future__ import annotations

import os

from .base.fsutil import path_property
from .base.project import DEFAULT_MEMORY_DIR, find_project_root, require_memory_dir, resolve_memory_dir

# what `Memory.prime` loads: the modules a pack, a recall and an expand import on their first call
# (`tests/test_warm_start.py` fails when a first call loads one more)
PRIME_MODULES = (".curated.pack.reading", ".ledger.pack_sections", ".ledger.recall.recall",
                 ".ledger.recall.recall_scans", ".ledger.recall.context", ".ledger.recall.query_expand",
                 ".ledger.frames", ".ledger.results", ".base.skeleton", "unicodedata")


class Memory:
    """A project's memory. Open it with `Memory.open(project_root)`.

    `root` and `memory_dir` are `Path`s; inside, the two are kept as strings (`root_str`,
    `memory_dir_str`), which the hook path uses, so a prompt hook never imports `pathlib`."""

    def __init__(self, root, memory_dir):
        self.root_str = os.fspath(root)
        self.memory_dir_str = os.fspath(memory_dir)
        self._notes = None
        self._debouncer = None

    root = path_property("root_str", "The project root.")
    memory_dir = path_property("memory_dir_str", "The memory folder (docs/memory by default).")

    @classmethod
    def open(cls, project_root=None, memory_dir: str | None = None) -> Memory:
        """Open the memory of the project at `project_root`.

        Without a root, the nearest ancestor of the current directory holding
        `<memory_dir>/manifest.md` is used, else the current directory (for `init`).
        """
        arg = memory_dir or DEFAULT_MEMORY_DIR
        if project_root is None:
            root = find_project_root(None, arg)
        else:
            root = os.path.realpath(os.path.expanduser(os.fspath(project_root)))
        return cls(root, resolve_memory_dir(root, arg))

    def __repr__(self) -> str:
        return f"Memory({self.root_str!r})"

    # ---- curated: reading --------------------------------------------------------------------

    def init(self, *, extended: bool = False, repair: bool = False, replace_existing: bool = False,
             apply: bool = False):
        """Create the protocol 0.5 files (never overwriting), `.cache/`, the merge rules in `.gitattributes`
        and, in a git repository, the merge drivers in `.git/config` (`setup.merge_drivers`). Returns an
        `InitResult`. `repair` and `replace_existing` (a preview unless `apply`) are
        `curated.write.initializing.init_memory`'s. The agent hosts' entry points are an adapter's job
        (`agents.install.init_with_agents`): the library knows no host.
        """
        from .curated.write.initializing import init_memory
        from .setup.merge_drivers import register

        result = init_memory(self, extended=extended, repair=repair, replace_existing=replace_existing, apply=apply)
        if result.applied:  # a preview writes nothing, .git/config included
            result.merge_drivers = register(self.root_str)
        return result

    def read(self, task: str, *, areas=(), profiles=(), rules=(), paths=(), query: str | None = None,
             names_only: bool = False, strict: bool = False, ledger: bool = True, fail_open: bool = False,
             terms=None):
        """Build the context pack for `task`; returns a `ReadResult` (see `curated.context_pack`).

        A missing required file makes `exit_code` 1 (the pack is still built); with `strict=True`
        it raises InvalidInput instead. With `fail_open=True` (the hooks) a part that cannot load is
        left out and named in `problems` instead of raising. `terms` (a `base.errors.Terms`) word what
        the pack points to (a recall that lists what was left out, an expand): the caller's own words.
        """
        from .curated.pack.reading import read_pack

        return read_pack(self, task=task, areas=areas, profiles=profiles, rules=rules, paths=paths, query=query,
                         names_only=names_only, strict=strict, ledger=ledger, fail_open=fail_open, terms=terms)

    def check(self):
        """Validate the curated folder; returns a `CheckResult` (`ok` is False if any problem)."""
        from .curated.checking import check_memory

        return check_memory(self)

    def status(self):
        """Each file's tokens against its budget, entry counts, inbox size; returns a `StatusResult`."""
        from .curated.checking import status_memory

        return status_memory(self)

    def manifest(self):
        """The parsed manifest (`curated.routing.Manifest`)."""
        from .curated.pack.reading import load_manifest

        return load_manifest(require_memory_dir(self.memory_dir))

    # ---- curated: writing (each a plan, written all-or-nothing, returning a `curated.plans.PlanResult`) --

    def add(self, text: str, type: str, reasons: list[str] | None = None, scope: str | None = None,
            name: str | None = None, area: str | None = None, allow_long: bool = False, title: str | None = None):
        """Add one entry (decision, constraint, preference, tombstone, rule, profile, area or inbox);
        `title` is a decision's or tombstone's heading (default: the text's first words)."""
        from .curated.write import write_api

        return write_api.add(self, text, type, reasons, scope, name, area, allow_long, title)

    def forget(self, topic: str, mode: str = "soft", apply: bool = False, plan_id: str | None = None,
               allow_broad_match: bool = False):
        """Remove every curated entry mentioning `topic` (preview unless `apply`)."""
        from .curated.write import write_api

        return write_api.forget(self, topic, mode, apply, plan_id, allow_broad_match)

    def compact(self, target: str | None = None, apply: bool = False, plan_id: str | None = None,
                archive_oldest: bool = False):
        """Dedupe, drop tombstoned inbox items, archive the oldest over budget (preview unless `apply`)."""
        from .curated.write import write_api

        return write_api.compact(self, target, apply, plan_id, archive_oldest)

    def enable(self, module: str, paths: list[str] | None = None):
        """Create an optional module and index it in the manifest (idempotent)."""
        from .curated.write import write_api

        return write_api.enable(self, module, paths)

    def migrate(self, apply: bool = False, plan_id: str | None = None):
        """Bring the manifest's protocol metadata and routes up to date (preview unless `apply`)."""
        from .curated.write import write_api

        return write_api.migrate(self, apply, plan_id)

    def finish_interrupted_writes(self) -> str | None:
        """Finish a multi-file plan a killed command left behind; what was done, or None if nothing was pending."""
        from .curated.write import write_api

        return write_api.finish_interrupted_writes(self)

    def interrupted_write_pending(self) -> bool:
        """One stat: whether a killed multi-file write awaits `finish_interrupted_writes` (for readers to warn)."""
        from .curated.write import write_api

        return write_api.interrupted_write_pending(self)

    def check_privacy(self) -> list:
        """Every credential-looking span in the memory folder: path, line, column, kind — never the value."""
        from .curated.write import write_api

        return write_api.check_privacy(self)

    # ---- ledger: writing (each keeps the export mirror in step) -------------------------------

    def remember(self, text, *, kind="finding", priority="medium", title=None, tags=(), paths=(), quote=None,
                 scope="workspace", expires=None, supersedes=None, actor="human", provenance=None, reason=None):
        """Record a note; with `supersedes`, the create and the `supersede` of the old note are one txn.

        The inputs and their defaults are declared in `ledger.params.NOTE_INPUTS`. Only a person's
        word is taken as given: for any other `actor` the quote is checked against the user's recent
        messages (`session.capture`), and a quote the user never wrote is dropped and the note kept at
        the writer's own provenance; the returned note's `quote_refused` then says why."""
        quote, provenance, refused = self._bound(actor, text, quote, provenance)
        note = self._ledger_notes().remember(
            text, kind=kind, priority=priority, title=title, tags=tags, paths=paths, quote=quote, scope=scope,
            expires=expires, supersedes=supersedes, actor=actor, provenance=provenance, reason=reason)
        note.quote_refused = refused
        return self._mirrored(note)

    def supersede(self, note_id, text, *, reason, kind=None, priority=None, title=None, tags=(), paths=(),
                  quote=None, scope=None, expires=None, actor="human", provenance=None):
        """Replace a note by a new one; what is not given of `ledger.params.KEPT_ON_SUPERSEDE` (kind,
        priority, tags, paths, scope) is the replaced note's. The quote is checked as `remember` checks it."""
        quote, provenance, refused = self._bound(actor, text, quote, provenance)
        note = self._ledger_notes().supersede(
            note_id, text, reason=reason, actor=actor, kind=kind, priority=priority, title=title, tags=tags,
            paths=paths, quote=quote, scope=scope, expires=expires, provenance=provenance)
        note.quote_refused = refused
        return self._mirrored(note)

    def _bound(self, actor, text, quote, provenance) -> tuple:
        """(quote, provenance, why a quote was refused) as the write records them (see `remember`)."""
        if actor == "human":
            return quote, provenance, None
        from .session.capture import bind_writer

        binding = bind_writer(self.memory_dir_str, actor, text, quote, provenance)
        if binding is None:  # input the write refuses, naming it
            return quote, provenance, None
        return binding.quote, binding.provenance, binding.refused_reason

    def revoke(self, note_id, *, reason, actor="human"):
        """Withdraw a note that was wrong (it stays in history as revoked)."""
        return self._mirrored(self._ledger_notes().lifecycle("revoke", note_id, reason, actor))

    def flag_stale(self, note_id, *, reason, actor="human"):
        """Mark a note as possibly out of date (`reinstate` confirms it)."""
        return self._mirrored(self._ledger_notes().lifecycle("flag_stale", note_id, reason, actor))

    def reinstate(self, note_id, *, reason, actor="human"):
        """Make a stale, superseded, revoked or expired note active again."""
        return self._mirrored(self._ledger_notes().lifecycle("reinstate", note_id, reason, actor))

    def expire(self, note_id, *, reason, actor="human"):
        """Expire a note now (it no longer applies)."""
        return self._mirrored(self._ledger_notes().lifecycle("expire", note_id, reason, actor))

    def promote(self, note_id, *, to, actor="human"):
        """Raise a note's provenance (`to`: agent, user-stated or human; only a person reaches human)."""
        return self._mirrored(self._ledger_notes().promote(note_id, to=to, actor=actor))

    def forget_note(self, note_id):
        """The one hard delete: the note's text leaves every shard; a content-free `forget` stays.
        Returns a `NoteForgotten`."""
        return self._mirrored(self._ledger_notes().forget_note(note_id), "forget")

    def edit_checkin(self, path, reason=None, actor="human"):
        """Turn the edited buffer at `path` into one txn of events; refuse it whole on any conflict.
        The events are `actor`'s: a block an agent adds or rewrites is an agent's note, and a person's
        note it only relabels keeps the words but not the human provenance. Returns a `CheckedIn`."""
        from .ledger.text import text_api

        result = text_api.edit_checkin(self._ledger_notes(), path, reason, actor)
        return self._mirrored(result, "checkin") if result.events else result

    # ---- curated: the one write an agent may make -----------------------------------------------

    def propose(self, text: str) -> dict:
        """Add `text` as today's newest `inbox.md` item, for a person to accept or drop (credentials
        refused); nothing else of the curated tier changes. Returns {"date", "file", "item"}."""
        from .session.inbox import propose

        return propose(self, text)

    # ---- ledger: reading ----------------------------------------------------------------------

    def notes(self, *, include_forgotten=False):
        """Every note as folded now, ordered by (created at, id)."""
        return self._ledger_notes().notes(include_forgotten=include_forgotten)

    def note(self, id_or_prefix):
        """One note by id or unique prefix (4+ characters)."""
        return self._ledger_notes().note(id_or_prefix)

    def history(self, note_id):
        """The note's applied events in replay order (who, when, why): a `History`."""
        return self._ledger_notes().history(note_id)

    def expand(self, ids, *, caller: str | None = None):
        """Full notes by id, framed by provenance and state, with the supersession chain: an `Expansion`.
        `caller` (one of `session.usage_log.DOORS`) logs the read for `stats`; see `recall`."""
        self._check_caller(caller)
        expansion = self._ledger_notes().expand(ids)
        return self._log_use(expansion, "expand", [item["id"] for item in expansion.notes], caller)

    def recall(self, query=None, *, kinds=(), tags=(), paths=(), states=(), limit=10, include_all=False, now=None,
               counts=True, ids=True, caller: str | None = None):
        """Ranked notes with an account of what was not shown (`counts=False`: hits only;
        `counts="matched"`: hits and how many matched, without the exclusions — for hooks). The filters
        and their defaults are declared in `ledger.params.RECALL_INPUTS`.

        With `caller` ("cli", "mcp", "viewer": who asked, for `stats`) the read is logged in the usage log;
        a log that cannot be written is the result's `usage_warning`, never a failure of the read.
        Without it nothing is logged (a hook logs what it injected itself)."""
        self._check_caller(caller)
        result = self._ledger_notes().recall(query, kinds=kinds, tags=tags, paths=paths, states=states, limit=limit,
                                             include_all=include_all, now=now, counts=counts, ids=ids)
        return self._log_use(result, "recall", [hit.note.id for hit in result.hits], caller)

    @staticmethod
    def _check_caller(caller: str | None) -> None:
        if caller is not None:
            from .session.usage_log import check_door

            check_door(caller)

    def _log_use(self, result, kind: str, ids: list, caller: str | None):
        if caller is not None:
            from .session.usage_log import note_use

            result.usage_warning = note_use(self.memory_dir_str, kind, caller, ids)
        return result

    def browse(self, *, kinds=(), states=(), provenances=(), tags=(), paths=(), offset=0, limit=50, now=None):
        """Every note matching the filters, newest first, one page at a time: a `NotePage` (with the total)."""
        from .ledger.index.browse import browse_notes

        return browse_notes(self.index(), kinds=kinds, states=states, provenances=provenances, tags=tags,
                            paths=paths, offset=offset, limit=limit, now=now)

    def evaluate(self, truth, *, k=10, limit=10, now=None) -> dict:
        """Run the labelled queries of the JSONL file `truth` through recall: metrics and every miss by stage."""
        from .ledger.recall.evaluate import evaluate

        return evaluate(self, truth, k=k, limit=limit, now=now)

    def stats(self, now=None):
        """The adoption report from the hooks' usage log and the ledger: per session and in total, what was
        injected, read and written, with flags where memory goes unused (an `agents.adoption.AdoptionReport`)."""
        from .session.adoption import report

        return report(self, now=now)

    def reindex(self, progress=None):
        """Rebuild the derived index from the shards: a `Reindexed`."""
        return self._ledger_notes().reindex(progress=progress)

    def doctor(self, repair=False, yes=False):
        """Verify every shard (and with `repair` remove what an interrupted write left): a `DoctorReport`.
        The text of notes a merged forget line forgot is deleted only with `yes` too."""
        return self._ledger_notes().doctor(repair=repair, yes=yes)

    def diagnose(self) -> list:
        """The setup, piece by piece (`setup.setup_doctor.Finding`s): curated files, index, mirror, merge
        rules and drivers, the ignored cache. Each wired host's hooks and MCP server are checked by the
        adapter that knows hosts (`agents.host_doctor.check_hosts`)."""
        from .setup.setup_doctor import diagnose

        return diagnose(self)

    def index(self):
        """The ledger's derived index, caught up with the shards (one connection per Memory, reused)."""
        return self._ledger_notes().index()

    def warm(self) -> None:
        """Begin reading, in the background, what fast recall keeps in memory (a long-lived caller at
        its start: the MCP server, the viewer); no call waits for it (`ledger/index/warm.py`)."""
        self.index().warm()

    @staticmethod
    def prime() -> None:
        """Load the modules a pack, a recall and an expand load when first called, so that a long-lived
        caller's first call costs what the next ones do (at 749 notes the MCP server's first
        `memory_context` took 64.6 ms and the next ones 15.7, most of it the 31 modules the first loaded).
        The servers call it before they read their first request (on a thread beside a first call,
        it made that call 2x slower)."""
        import importlib

        for name in PRIME_MODULES:
            importlib.import_module(name, __package__)

    def ledger(self):
        """The ledger's shards (`ledger.store.Ledger`)."""
        return self._ledger_notes().ledger()

    # ---- history (git, read-only) -------------------------------------------------------------

    def diff(self, base: str | None = None, head: str | None = None):
        """What `head` (a commit; None: the working tree) changes in memory against `base` (a commit; None:
        the merge base with the default branch): a `history.diff.MemoryDiff`, forgotten text never in it."""
        from .history.diff import diff_memory

        return diff_memory(self, base, head)

    def file_history(self, name: str, limit: int = 50, skip: int = 0):
        """Curated file `name` through its commits (each commit's entry changes, each entry's history):
        a `history.file_history.FileHistory`; what is forgotten now is shown in no commit."""
        from .history.file_history import file_history

        return file_history(self, name, limit, skip)

    def activity(self, *, since=None, until=None, kind=None, op=None, actor=None, before=None, limit=200):
        """Ledger events and curated commits, newest first, from `since` to `until` (UTC dates, both included):
        a `history.activity.ActivityPage`."""
        from .history.activity import activity

        return activity(self, since=since, until=until, kind=kind, op=op, actor=actor, before=before, limit=limit)

    def search(self, query: str, *, limit: int = 50, caller: str | None = None):
        """Curated entries holding every word of `query`, and the ledger's recall of it (logged for `caller`):
        a `history.search.SearchResult`."""
        self._check_caller(caller)
        from .history.search import search_all

        result = search_all(self, query, limit=limit)
        if result.recall is not None:
            self._log_use(result.recall, "recall", [hit.note.id for hit in result.recall.hits], caller)
        return result

    def session(self, session: str):
        """One session `stats` lists, opened: its hook calls, what they injected, what was written meanwhile."""
        from .session.session_view import session_view

        return session_view(self, session)

    # ---- ledger as text -----------------------------------------------------------------------

    def export(self, path=None, check: bool = False):
        """Render the ledger to Markdown (default `<memory dir>/MEMORY.md`, or the configured path);
        with `check`, write nothing and say whether the file is `up_to_date`. An `Exported`."""
        from .ledger.text import text_api

        return text_api.export(self._ledger_notes(), path, check)

    def export_enable(self, path=None):
        """Turn the mirror on (recorded in the committed `config.json`) and render it now."""
        from .ledger.text import text_api

        return text_api.export_enable(self._ledger_notes(), path)

    def export_disable(self):
        """Stop re-rendering the mirror after writes; the file itself is left as it is."""
        from .ledger.text import text_api

        return text_api.export_disable(self._ledger_notes())

    def edit_checkout(self, path):
        """Write the active (and stale) notes to `path` as an edit buffer: a `CheckedOut`."""
        from .ledger.text import text_api

        return text_api.edit_checkout(self._ledger_notes(), path)

    # ---- the mirror after writes --------------------------------------------------------------

    def debounce_mirror(self, interval: float = 3.0, lock=None) -> None:
        """From now on re-render the mirror once writes have been quiet for `interval` seconds (for a
        long-lived process; call `flush_mirror` before it exits). `lock`, if given, is held around
        each render, so a timed render never interleaves with the caller's own calls."""
        from .ledger.text import mirror

        def render(memory):
            if lock is None:
                return mirror.refresh_mirror_if_enabled(memory)
            with lock:
                return mirror.refresh_mirror_if_enabled(memory)

        self._debouncer = mirror.MirrorDebouncer(self, interval=interval, render=render)

    def flush_mirror(self):
        """Render a debounced mirror now if a write is pending (what the render returned, or None)."""
        return self._debouncer.flush() if self._debouncer is not None else None

    def _mirrored(self, result, landed: str = "change"):
        from .ledger.text.mirror import after_write

        result.mirror_warning = after_write(self, landed, self._debouncer)
        return result

    def _ledger_notes(self):
        if self._notes is None:
            from .ledger.api import LedgerNotes

            self._notes = LedgerNotes(self.root_str, self.memory_dir_str)
        return self._notes
