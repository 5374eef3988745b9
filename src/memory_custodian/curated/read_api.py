"""Memory methods for: init, read, check, status (curated read path)."""

from __future__ import annotations


class CuratedReadAPI:
    root: "object"
    memory_dir: "object"
