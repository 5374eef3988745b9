"""The ledger's sections of the context pack: directives in full, gotchas for the touched paths,
and the top recall index lines for the task (owned by the ledger tier; `read` calls this)."""

from __future__ import annotations


def ledger_sections(memory, *, task: str, paths: tuple[str, ...] = (), query: str | None = None,
                    budgets: dict | None = None) -> list:
    """Return a list of `memory_custodian.context.Section` for the pack (empty until the ledger exists)."""
    return []
