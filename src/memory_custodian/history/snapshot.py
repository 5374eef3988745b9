"""The memory folder at one point of its history (a commit, or the working tree), read as both tiers read it:
the curated files as entries, the ledger shards folded to notes, the forgotten fingerprints, the manifest."""

from __future__ import annotations

from ..base.errors import CustodianError
from ..curated.manifest.reader import parse_manifest
from ..curated.parse.units import split_units
from ..curated.write.fingerprints import FILE as FORGOTTEN_FILE
from ..curated.write.fingerprints import parse as parse_prints
from ..ledger.storage.fold import replay
from ..ledger.storage.store import is_shard_name, parse_lines
from .ledger_scope import restricted

MIRROR = "MEMORY.md"  # the ledger's export, generated: its changes are the ledger's, told once
CURATED_FOLDERS = ("", "rules", "profiles", "areas", "archive")


def is_curated(name: str) -> bool:
    folder, _, base = name.rpartition("/")
    return name.endswith(".md") and folder in CURATED_FOLDERS and name != MIRROR and not base.startswith(".")


class Snapshot:
    """`files`: every file of the folder by relative path (bytes); `at`: the UTC time it is read as."""

    def __init__(self, label: str, commit: str | None, at: str, files: dict[str, bytes]):
        self.label, self.commit, self.at, self.files = label, commit, at, files
        self._ledger = None
        self._units: dict[str, list] = {}
        self.scope: set | None = None  # the notes to fold (`ledger_scope.scope`); None: all of them

    def text(self, name: str) -> str | None:
        data = self.files.get(name)
        return None if data is None else data.decode("utf-8", "replace")

    @property
    def curated(self) -> list[str]:
        return sorted(n for n in self.files if is_curated(n))

    def units(self, name: str) -> list:
        """The entries of a curated file (none for a file that is prose only, or missing)."""
        if name not in self._units:
            text = self.text(name)
            doc = split_units(text) if text is not None else None
            self._units[name] = list(doc.units) if doc is not None and doc.mode in ("section", "bullet") else []
        return self._units[name]

    @property
    def forgotten(self) -> frozenset:
        return parse_prints(self.text(FORGOTTEN_FILE))

    def ledger(self):
        """(notes by id, applied events by note id), replayed leniently: a history may hold a torn line."""
        if self._ledger is None:
            events = []
            for name in sorted(self.files):
                folder, _, base = name.rpartition("/")
                if folder == "ledger" and is_shard_name(base):
                    data = self.files[name]
                    if self.scope is not None:
                        data = restricted(data, self.scope)
                    events.extend(parse_lines(name, data, lenient=True)[0])
            notes, applied, _ = replay(events)
            self._ledger = (notes, applied)
        return self._ledger

    def manifest(self):
        text = self.text("manifest.md")
        if text is None:
            return None

        try:
            return parse_manifest(text)
        except CustodianError:  # a manifest broken at this commit: `check` names it; routes are then not flagged
            return None
