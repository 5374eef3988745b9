"""A project exactly as MemoryCustodian 0.9.1's `init` lays it out: its templates byte for byte
(`tests/fixtures/memorycustodian/init-0.9.1/`, MIT), no `.cache/`, no `.gitattributes`."""

from __future__ import annotations

from pathlib import Path

from conftest import MC_FIXTURES

from memory_custodian.curated.write.entries import today

TEMPLATES = MC_FIXTURES / "init-0.9.1"
CORE = ("manifest.md", "brief.md", "decisions.md", "constraints.md", "do-not-use.md", "inbox.md")
EXTENDED = ("preferences.md", "changelog.md", "rules/README.md", "profiles/README.md", "archive/README.md")


def init_091(root: Path, *, extended: bool = False) -> Path:
    """`memory-custodian init` (`--extended`) of 0.9.1 in `root`; returns `root`."""
    memory = root / "docs" / "memory"
    for name in CORE + (EXTENDED if extended else ()):
        path = memory / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(template_091(name))
    return root


def template_091(name: str, title: str = "") -> bytes:
    """One 0.9.1 template as written: `enable/area.md` (`rule`, `profile`) with the module's title."""
    text = (TEMPLATES / name).read_bytes()
    return text.replace(b"{date}", today().encode()).replace(b"{title}", title.encode())


def curate_brief(root: Path) -> None:
    """Replace the template brief with a real one, as a 0.9.1 user does right after `init`."""
    (root / "docs/memory/brief.md").write_text(
        "# Project Brief\n\nPurpose:\n- NightNotes stores session notes in a local CLI.\n", encoding="utf-8")
