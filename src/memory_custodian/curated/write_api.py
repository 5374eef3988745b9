"""Memory methods for: add, forget, compact, enable, migrate (curated write path)."""

from __future__ import annotations


class CuratedWriteAPI:
    root: "object"
    memory_dir: "object"
