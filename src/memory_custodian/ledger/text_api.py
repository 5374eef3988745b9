"""Memory methods for: export, edit check-out/check-in (ledger as text)."""

from __future__ import annotations


class LedgerTextAPI:
    root: "object"
    memory_dir: "object"
