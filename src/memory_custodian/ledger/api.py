"""Memory methods for: remember, lifecycle verbs, recall, expand, history, reindex, doctor (ledger tier).

Each method checks its input, resolves note ids, and hands one txn to the store. Reads go
through the index (caught up on demand) so a command on a large ledger never replays it all.
"""

from __future__ import annotations

from ..errors import InvalidInput, NotFound


class LedgerAPI:
    root: "object"
    memory_dir: "object"

    # ---- plumbing -----------------------------------------------------------------------------

    def _ledger(self):
        from ..project import require_memory_dir
        from .store import Ledger

        require_memory_dir(self.memory_dir_str)
        return Ledger(self.memory_dir_str)

    def _index(self):
        """The index, caught up with the shards (one connection per Memory, reused)."""
        index = self.__dict__.get("_ledger_index")
        if index is None:
            from .index import Index

            index = self.__dict__["_ledger_index"] = Index(self._ledger())
        index.catch_up()
        return index

    def _resolve(self, id_or_prefix: str, index=None) -> str:
        """The full id for `#k7m2`, `k7m2x9qa`, …: a unique prefix of at least 4 characters."""
        from .ids import CROCKFORD, NOTE_ID_LEN

        key = str(id_or_prefix).strip().lstrip("#").lower()
        if len(key) < 4 or len(key) > NOTE_ID_LEN or any(c not in CROCKFORD for c in key):
            raise InvalidInput(f"note id {id_or_prefix!r}: give at least 4 characters of an id such as #k7m2x9qa")
        index = index or self._index()
        found = index.ids_with_prefix(key)
        if not found:
            raise NotFound(f"no note #{key} in the ledger — try `memory-custodian recall`")
        if len(found) > 1:
            shown = ", ".join(f"#{i}" for i in found[:5])
            raise InvalidInput(f"note id #{key} is ambiguous ({shown}); give more characters")
        return found[0]

    def _write(self, events: list[dict], index=None) -> list[dict]:
        """Append one txn, checking transitions against the index caught up under the lock."""
        from .. import fsutil

        ledger = self._ledger()
        with fsutil.project_lock(self.memory_dir):
            needs_state = any(ev["op"] != "create" for ev in events)
            lookup = None
            if needs_state:
                index = index or self._index()
                index.catch_up()
                lookup = index.get_note
            return ledger.append_txn(events, lookup=lookup)

    # ---- writing ------------------------------------------------------------------------------

    def remember(self, text, *, kind="finding", priority="medium", title=None, tags=(), paths=(), quote=None,
                 scope="workspace", expires=None, supersedes=None, actor="human", provenance=None, reason=None):
        """Record a note; with `supersedes`, the create and the `supersede` of the old note are one txn."""
        from .ids import new_note_id
        from .inputs import (clean_expires, clean_paths, clean_tags, clean_text, clean_title, kind_priority,
                             provenance_for, scope_fields)

        text = clean_text(text)
        kind, priority = kind_priority(kind, priority)
        title = clean_title(title, text)
        tags, paths = clean_tags(tags), clean_paths(paths)
        quote = quote.strip() if isinstance(quote, str) and quote.strip() else None
        prov = provenance_for(actor, provenance, quote)
        from ..secrets import refuse_secrets

        refuse_secrets("\n".join([title, text, quote or "", *tags, *paths]), "the note")
        ev = {"op": "create", "note": new_note_id(), "actor": actor, "kind": kind, "priority": priority,
              "title": title, "body": text, "tags": tags, "paths": paths, "provenance": prov, "quote": quote,
              "expires": clean_expires(expires), **scope_fields(scope, self.root)}
        events = [ev]
        if supersedes is not None:
            index = self._index()
            old = self._resolve(supersedes, index)
            ev["supersedes"] = old
            why = reason if reason and str(reason).strip() else f"replaced by #{ev['note']}"
            events.append({"op": "supersede", "note": old, "actor": actor, "by": ev["note"], "reason": why})
            written = self._write(events, index)
        else:
            written = self._write(events)
        from .fold import apply

        return apply(None, written[0])

    def supersede(self, note_id, text, *, reason, actor="human", **fields):
        """Replace a note by a new one (same kind, priority, tags, paths and scope unless given)."""
        from .inputs import clean_text

        clean_text(reason, "--reason")
        index = self._index()
        old_id = self._resolve(note_id, index)
        old = index.get_note(old_id)
        from ..errors import Refused
        from .fold import transition_error
        from .ids import now_iso

        why = transition_error(old, {"op": "supersede", "note": old_id, "at": now_iso(), "actor": actor})
        if why is not None:
            raise Refused(f"{why}; nothing was written")
        for key in ("kind", "priority", "tags", "paths", "scope"):
            if fields.get(key) in (None, ()):
                fields[key] = getattr(old, key)
        return self.remember(text, supersedes=old_id, reason=reason, actor=actor, **fields)

    def _lifecycle(self, op: str, note_id, reason, actor, **extra):
        from .fold import apply
        from .model import REASON_ACTORS, REASON_REQUIRED
        from .inputs import require_utf8
        from .model import copy_note

        if isinstance(reason, str):
            require_utf8(reason, "--reason")
        if op in REASON_REQUIRED and actor in REASON_ACTORS:
            if not isinstance(reason, str) or not reason.strip():
                raise InvalidInput(f"{op.replace('_', '-')} needs a reason: pass --reason TEXT")
        index = self._index()
        full = self._resolve(note_id, index)
        ev = {"op": op, "note": full, "actor": actor, **extra}
        if reason is not None and str(reason).strip():
            from ..secrets import refuse_secrets

            refuse_secrets(reason, "--reason")
            ev["reason"] = " ".join(str(reason).split())
        written = self._write([ev], index)
        return apply(copy_note(index.get_note(full)), written[0])

    def revoke(self, note_id, *, reason, actor="human"):
        return self._lifecycle("revoke", note_id, reason, actor)

    def flag_stale(self, note_id, *, reason, actor="human"):
        return self._lifecycle("flag_stale", note_id, reason, actor)

    def reinstate(self, note_id, *, reason, actor="human"):
        return self._lifecycle("reinstate", note_id, reason, actor)

    def expire(self, note_id, *, reason, actor="human"):
        return self._lifecycle("expire", note_id, reason, actor)

    def promote(self, note_id, *, to, actor="human"):
        from .inputs import choice
        from .model import PROVENANCES

        choice(to, PROVENANCES, "provenance")
        return self._lifecycle("promote", note_id, None, actor, to=to)

    def forget_note(self, note_id) -> dict:
        """The one hard delete: the note's text leaves every shard; a content-free `forget` stays."""
        full = self._resolve(note_id)
        result = self._ledger().forget(full, actor="human")
        self._index()
        return result

    # ---- reading ------------------------------------------------------------------------------

    def notes(self, *, include_forgotten=False):
        """Every note as folded now, ordered by (created at, id)."""
        index = self._index()
        return [n for n in index.all_notes() if include_forgotten or n.state != "forgotten"]

    def note(self, id_or_prefix):
        index = self._index()
        return index.get_note(self._resolve(id_or_prefix, index))

    def history(self, note_id) -> list[dict]:
        """The note's applied events in replay order: who, when, why."""
        index = self._index()
        return index.note_events(self._resolve(note_id, index))

    def ledger_events_since(self, event_id: str | None = None) -> list[dict]:
        """Applied events after `event_id` (all when None), in replay order."""
        index = self._index()
        return index.events_after(event_id)

    def expand(self, ids) -> list[dict]:
        from .frames import expand_notes

        index = self._index()
        return expand_notes(index, [self._resolve(i, index) for i in ids])

    def recall(self, query=None, *, kinds=(), tags=(), paths=(), states=(), limit=10, include_all=False, now=None,
               counts=True, ids=True):
        """Ranked notes with an account of what was not shown (`counts=False`: hits only;
        `counts="matched"`: hits and how many matched, without the exclusions — for hooks)."""
        from .recall import run_recall

        index = self._index()
        return index.guarded(lambda: run_recall(
            index, query=query, kinds=kinds, tags=tags, paths=paths, states=states, limit=limit,
            include_all=include_all, now=now, root=self.root_str, counts=counts, ids=ids))

    def reindex(self, progress=None) -> dict:
        return self._index().rebuild(progress=progress)

    def doctor(self, repair=False) -> dict:
        from .doctor import run_doctor

        return run_doctor(self._ledger(), repair=repair)
