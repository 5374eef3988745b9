"""The ledger tier as one `Memory` uses it: remember, the lifecycle verbs, recall, expand, history,
reindex, doctor.

Each verb checks its input, resolves note ids, and hands one txn to the store. Reads go through
the index (caught up on demand, one connection per Memory) so a command on a large ledger never
replays it all.
"""

from __future__ import annotations

from ..base import fsutil
from ..base.errors import CustodianError, InvalidInput, NotFound, Refused
from ..base.limits import INDEX_BYTES_PER_COMMAND, INDEX_LINES_PER_COMMAND
from ..base.project import require_memory_dir
from ..base.textsafe import shown as quoted
from .params import KEPT_ON_SUPERSEDE
from .storage.fold import apply, transition_error
from .storage.ids import CROCKFORD, NOTE_ID_LEN, new_note_id, now_iso
from .storage.inputs import (
    QUOTE_MAX,
    REASON_MAX,
    bounded,
    choice,
    clean_expires,
    clean_paths,
    clean_tags,
    clean_text,
    clean_title,
    kind_priority,
    provenance_for,
    require_utf8,
    scope_fields,
)
from .storage.model import LEGAL_NEXT, PROVENANCES, REASON_ACTORS, REASON_REQUIRED, copy_note
from .storage.store import Ledger

COMMAND_BUDGET = (INDEX_LINES_PER_COMMAND, INDEX_BYTES_PER_COMMAND)


class LedgerNotes:
    """The notes of the ledger in `memory_dir`; `root` is the project root (for branch scope and paths)."""

    def __init__(self, root: str, memory_dir: str):
        self.root = root
        self.memory_dir = memory_dir
        self._cached_index = None

    # ---- plumbing -----------------------------------------------------------------------------

    def ledger(self):
        require_memory_dir(self.memory_dir)
        return Ledger(self.memory_dir)

    def index(self):
        """The index (one connection, reused), caught up with the shards as far as one command reads
        (`limits.INDEX_LINES_PER_COMMAND`); `Index.unread` says what it has not read yet."""
        index = self._index_object()
        index.catch_up(budget=COMMAND_BUDGET)
        return index

    def _index_object(self):
        if self._cached_index is None:
            from .index.index import Index

            self._cached_index = Index(self.ledger())
        return self._cached_index

    def _index_for_change(self, index=None):
        """The index, which must hold every event: a change to a note is checked against all of them.
        `index`: the one this command caught up already, caught up again (another writer may have appended)."""
        if index is None:
            index = self.index()
        else:
            index.catch_up(budget=COMMAND_BUDGET)
        if index.unread()[0]:
            raise Refused(f"{index.unread_said()}; a change to a note is checked against its every event, so "
                          "nothing was changed — retry once it is read, or run {verb:reindex} to read it now")
        return index

    def resolve(self, id_or_prefix: str, index=None) -> str:
        """The full id for `#k7m2`, `k7m2x9qa`, …: a unique prefix of at least 4 characters."""
        key = str(id_or_prefix).strip().lstrip("#").lower()
        if len(key) < 4:
            raise InvalidInput(f"note id {quoted(str(id_or_prefix))}: give at least 4 characters of an id "
                               "such as #k7m2x9qa")
        if len(key) > NOTE_ID_LEN or any(c not in CROCKFORD for c in key):
            odd = sorted({c for c in key if c not in CROCKFORD})[:8]
            why = (f"it has {', '.join(repr(c) for c in odd)}, which no id has (ids are 0-9 and a-z without i, l, "
                   "o and u)") if odd else f"ids have {NOTE_ID_LEN} characters"
            raise InvalidInput(f"{quoted(str(id_or_prefix))} is not a note id: {why}; an id looks like #k7m2x9qa")
        index = index or self.index()
        found = index.ids_with_prefix(key)
        if not found and index.unread()[0]:
            raise NotFound(f"no note #{key} in what is indexed: {index.unread_said()} — retry once it is "
                           "read, or run {verb:reindex} to read it now")
        if not found:
            raise NotFound(f"no note #{key} in the ledger — try {{verb:recall}}")
        if len(found) > 1:
            shown = ", ".join(f"#{i}" for i in found[:5])
            raise InvalidInput(f"note id #{key} is ambiguous ({shown}); give more characters")
        return found[0]

    def _write(self, events: list[dict], index=None) -> list[dict]:
        """Append one txn, checking transitions against the index caught up under the lock."""
        ledger = self.ledger()
        with fsutil.project_lock(self.memory_dir):
            needs_state = any(ev["op"] != "create" for ev in events)
            lookup = None
            if needs_state:
                index = self._index_for_change(index)  # again, under the lock: another writer may have appended
                lookup = index.get_note
            return ledger.append_txn(events, lookup=lookup)

    # ---- writing ------------------------------------------------------------------------------

    def remember(self, text, *, kind="finding", priority="medium", title=None, tags=(), paths=(), quote=None,
                 scope="workspace", expires=None, supersedes=None, actor="human", provenance=None, reason=None):
        """Record a note; with `supersedes`, the create and the `supersede` of the old note are one txn."""
        from ..base.secrets import refuse_secrets

        text = clean_text(text)
        kind, priority = kind_priority(kind, priority)
        title = clean_title(title, text)
        paths = clean_paths(paths)
        quote = bounded(quote.strip(), QUOTE_MAX, "{field}", "quote") if isinstance(quote, str) and quote.strip() else None
        prov = provenance_for(actor, provenance, quote)
        # the tags as given too: a tag is stored lower-cased, and many credentials are case-sensitive
        refuse_secrets("\n".join([title, text, quote or "", *map(str, tags or ()), *paths]), "the note")
        tags = clean_tags(tags)
        ev = {"op": "create", "note": new_note_id(), "actor": actor, "kind": kind, "priority": priority,
              "title": title, "body": text, "tags": tags, "paths": paths, "provenance": prov, "quote": quote,
              "expires": clean_expires(expires), **scope_fields(scope, self.root)}
        events = [ev]
        index = None
        if supersedes is not None:
            index = self._index_for_change()
            old = self.resolve(supersedes, index)
            ev["supersedes"] = old
            why = reason if reason and str(reason).strip() else f"replaced by #{ev['note']}"
            events.append({"op": "supersede", "note": old, "actor": actor, "by": ev["note"], "reason": why})
        return apply(None, self._write(events, index)[0])

    def supersede(self, note_id, text, *, reason, actor="human", **fields):
        """Replace a note by a new one (same kind, priority, tags, paths and scope unless given)."""
        _as_reason(clean_text, reason)
        index = self._index_for_change()
        old_id = self.resolve(note_id, index)
        old = index.get_note(old_id)
        _check_transition(old, "supersede", actor)
        for key in KEPT_ON_SUPERSEDE:
            if fields.get(key) in (None, ()):
                fields[key] = getattr(old, key)
        return self.remember(text, supersedes=old_id, reason=reason, actor=actor, **fields)

    def lifecycle(self, op: str, note_id, reason, actor, **extra):
        """One lifecycle event (revoke, flag_stale, reinstate, expire, promote) on a note; the note after it."""
        reason = _reason_text(reason, required=op in REASON_REQUIRED and actor in REASON_ACTORS, op=op)
        index = self._index_for_change()
        full = self.resolve(note_id, index)
        _check_transition(index.guarded(lambda: index.get_note(full)), op, actor, **extra)
        ev = {"op": op, "note": full, "actor": actor, **extra}
        if reason is not None:
            ev["reason"] = reason
        written = self._write([ev], index)
        found = index.get_note(full)
        return apply(None if found is None else copy_note(found), written[0])  # the note as the write found it, under the lock

    def promote(self, note_id, *, to, actor="human"):
        choice(to, PROVENANCES, "provenance")
        return self.lifecycle("promote", note_id, None, actor, to=to)

    def forget_note(self, note_id):
        """The one hard delete: the note's text leaves every shard; a content-free `forget` stays."""
        from .results import NoteForgotten
        from .text.text_api import rerender_mirrors

        full = self.resolve(note_id, self._index_for_change())
        if self._cached_index is not None:  # the scrub drops the index file: no connection may hold it
            self._cached_index.close()
            self._cached_index = None
        done = self.ledger().forget(full, actor="human")
        marks = done.pop("marks")
        left = []
        try:
            self.index()
        except CustodianError as exc:  # the delete is done: a cache that cannot be rebuilt is not its failure
            left.append(f"the index could not be rebuilt ({_cause_of(exc)}); the next command rebuilds it")
        left += rerender_mirrors(self, marks)
        if left:
            done["warning"] = "; ".join([*left, done["warning"]])
        return NoteForgotten(**done)

    # ---- reading ------------------------------------------------------------------------------

    def notes(self, *, include_forgotten=False):
        index = self.index()
        return [n for n in index.guarded(index.all_notes) if include_forgotten or n.state != "forgotten"]

    def note(self, id_or_prefix):
        index = self.index()
        return index.guarded(lambda: index.get_note(self.resolve(id_or_prefix, index)))

    def history(self, note_id):
        from .results import History

        index = self.index()
        return History(index.guarded(lambda: index.note_events(self.resolve(note_id, index))))

    def expand(self, ids):
        from .frames import expand_notes
        from .results import Expansion

        index = self.index()
        return Expansion(index.guarded(lambda: expand_notes(index, [self.resolve(i, index) for i in ids])))

    def recall(self, query=None, *, kinds=(), tags=(), paths=(), states=(), limit=10, include_all=False, now=None,
               counts=True, ids=True):
        from .recall.recall import run_recall

        index = self.index()
        return index.guarded(lambda: run_recall(
            index, query=query, kinds=kinds, tags=tags, paths=paths, states=states, limit=limit,
            include_all=include_all, now=now, root=self.root, counts=counts, ids=ids, expand=True))

    def reindex(self, progress=None):
        from .results import Reindexed

        return Reindexed(**self._index_object().rebuild(progress=progress))

    def doctor(self, repair=False, yes=False):
        from .storage.shard_doctor import run_doctor

        ledger = self.ledger()
        if repair:
            with fsutil.project_lock(self.memory_dir):
                ledger.finish_pending_forget()  # a local forget a full disk or a crash stopped part-way
        return run_doctor(ledger, repair=repair, yes=yes)


def _reason_text(reason, *, required: bool, op: str) -> str | None:
    """A lifecycle reason as recorded (one line); refused when required and missing, not UTF-8 or a secret."""
    from ..base.secrets import refuse_secrets

    if isinstance(reason, str):
        bounded(require_utf8(reason, "{field}", "reason"), REASON_MAX, "{field}", "reason")
    if required and (not isinstance(reason, str) or not reason.strip()):
        raise InvalidInput(f"{op.replace('_', '-')} needs a reason: pass {{field=}}", field="reason")
    if reason is None or not str(reason).strip():
        return None
    _as_reason(refuse_secrets, reason)
    return " ".join(str(reason).split())


def _as_reason(check, reason) -> None:
    """Run a check that names what it checks as the `reason` argument, which each adapter names its own way."""
    try:
        check(reason, "{field}")
    except CustodianError as exc:
        raise type(exc)(exc.template, field="reason") from exc


def _check_transition(note, op: str, actor: str, **extra) -> None:
    """Refuse an illegal event before writing, with the note's state and the verbs it allows."""
    at = now_iso()
    state = note.state_at(at)
    if op not in LEGAL_NEXT[state]:
        raise Refused(f"cannot {op.replace('_', '-')} note #{note.id}: it is {state} (allowed: {{allowed}}); "
                      "nothing was written", state=state, allowed=LEGAL_NEXT[state])
    why = transition_error(note, {"op": op, "note": note.id, "at": at, "actor": actor, **extra})
    if why is not None:
        raise Refused(f"{why}; nothing was written", state=state)


def _cause_of(exc: CustodianError) -> str:
    """What stopped a cache write, without its "nothing was changed" (about the cache, not the delete)."""
    cause = exc.__cause__
    return f"{cause.strerror or cause}" if isinstance(cause, OSError) else str(cause or exc.message)
