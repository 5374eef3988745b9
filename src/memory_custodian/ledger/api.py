"""Memory methods for: remember, lifecycle verbs, recall, expand, history, reindex, doctor (ledger tier)."""

from __future__ import annotations


class LedgerAPI:
    root: "object"
    memory_dir: "object"
