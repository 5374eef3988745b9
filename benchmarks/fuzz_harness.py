"""The fuzz harness: the contract every case is held to, a seeded project, and input strategies.

The contract: a result or one of the tool's own errors (`CustodianError`, one line), nothing
changed on disk after an error, and no case slower than `SLOW_CASE_S` (a hang).
"""

from __future__ import annotations

import hashlib
import sys
import time
from pathlib import Path

from hypothesis import strategies as st

REPO = Path(__file__).resolve().parents[1]
if str(REPO / "src") not in sys.path:
    sys.path.insert(0, str(REPO / "src"))

from memory_custodian.base.errors import CustodianError  # noqa: E402

SLOW_CASE_S = 5.0  # a single case slower than this counts as a hang

# ---- a seeded project every project-level target starts from ---------------------------------

NOTES = [
    ("directive", "high", "Never push to main directly; open a pull request.", ["process"], []),
    ("gotcha", "high", "The workspace lock is released before the daemon restarts.", ["lock"], ["src/daemon/**"]),
    ("finding", "medium", "Refund rounding uses banker's rounding in `payments/refund.py`.", [], ["payments/refund.py"]),
    ("task", "low", "Migrate the session store to SQLite (half done).", ["store"], ["src/store/"]),
]


def make_project(root: Path):
    """A small project with curated entries and ledger notes; returns its Memory."""
    from memory_custodian.memory import Memory

    root.mkdir(parents=True, exist_ok=True)
    memory = Memory.open(root)
    memory.init(extended=True)
    memory.add("Use PostgreSQL for persistence", type="decision", reasons=["one database to operate"])
    memory.add("No network calls in unit tests", type="constraint")
    memory.add("Prefer small pull requests", type="preference")
    memory.add("Store module owns persistence", type="area", name="store")
    for kind, prio, text, tags, paths in NOTES:
        memory.remember(text, kind=kind, priority=prio, tags=tags, paths=paths)
    return memory


def snapshot(memory_dir: Path) -> dict[str, str]:
    """Hashes of every file the user owns (the derived `.cache/` is excluded)."""
    out = {}
    for path in sorted(Path(memory_dir).rglob("*")):
        rel = path.relative_to(memory_dir).as_posix()
        if rel.startswith(".cache") or not path.is_file():
            continue
        out[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def restore_shards(memory, ctx) -> None:
    """Put the ledger back as the seeded project had it (the next case starts from the same shards)."""
    ledger = Path(memory.memory_dir) / "ledger"
    for shard in ledger.glob("*.jsonl"):
        if shard.name not in ctx["ledger_bytes"]:
            shard.unlink()
    for name, data in ctx["ledger_bytes"].items():
        (ledger / name).write_bytes(data)


class Bug(AssertionError):
    """An outcome outside the contract: the message names the target, the input and what happened."""


def expect_result_or_error(what: str, fn, *args, memory_dir: Path | None = None, **kwargs):
    """Run `fn`; a result or a CustodianError is fine; on an error nothing on disk may change."""
    before = snapshot(memory_dir) if memory_dir is not None else None
    started = time.monotonic()
    try:
        result = fn(*args, **kwargs)
    except CustodianError as exc:
        if "\n" in exc.one_line():
            raise Bug(f"{what}: error message spans lines: {exc.one_line()!r}") from exc
        if before is not None and snapshot(memory_dir) != before:
            raise Bug(f"{what}: files changed after an error ({exc.one_line()})") from exc
        return ("error", exc)
    except RecursionError as exc:
        raise Bug(f"{what}: RecursionError escaped") from exc
    except Exception as exc:
        raise Bug(f"{what}: {type(exc).__name__}: {exc}") from exc
    finally:
        took = time.monotonic() - started
        if took > SLOW_CASE_S:
            raise Bug(f"{what}: one case took {took:.1f} s (a hang?)")
    return ("ok", result)


# ---- generic strategies -------------------------------------------------------------------------

JUNK_LINES = [
    "", " ", "\t", "#", "##", "## ", "### ", "- ", "-", "* x", "```", "~~~", "````python", "<!--", "-->",
    "\ufeff# x", "\x00", "## \u200b", "## Ｄecisions", "- `../x.md`", "- `/etc/passwd`", "- `C:\\x.md`",
    "- rules/*.md: 9999999999999999999999 tokens max", "- brief.md: -1 tokens max", "- brief.md",
    "- paths: `**`", "Load:", "Load if present:", "### Planning", "## Load by task", "## Context budget",
    "## Always load", "## Optional module index", "### Enabled areas", "- `areas/x.md`: y",
    "  - paths: `src/**`, `../**`", "Decision:", "Reason:", "Scope:", "## 2026-13-45 - bad date",
    "## Tombstone: x", "\r", "line\rwith CR", "\u2028", "é" * 50, "a" * 2000,
]


def mutated_lines(sample: str, extra: list[str] | None = None):
    """Valid text with lines dropped, duplicated, swapped, truncated or replaced by junk."""
    base = sample.split("\n")
    pool = JUNK_LINES + (extra or [])
    op = st.one_of(
        st.tuples(st.just("drop"), st.integers(0, 10_000)),
        st.tuples(st.just("dup"), st.integers(0, 10_000)),
        st.tuples(st.just("swap"), st.integers(0, 10_000), st.integers(0, 10_000)),
        st.tuples(st.just("junk"), st.integers(0, 10_000), st.sampled_from(pool)),
        st.tuples(st.just("text"), st.integers(0, 10_000), st.text(max_size=40)),
        st.tuples(st.just("cut"), st.integers(0, 10_000), st.integers(0, 200)),
    )

    def apply(ops):
        lines = list(base)
        for o in ops:
            if not lines:
                lines = [""]
            i = o[1] % len(lines)
            if o[0] == "drop":
                del lines[i]
            elif o[0] == "dup":
                lines.insert(i, lines[i])
            elif o[0] == "swap":
                j = o[2] % len(lines)
                lines[i], lines[j] = lines[j], lines[i]
            elif o[0] in ("junk", "text"):
                lines.insert(i, o[2])
            elif o[0] == "cut":
                lines[i] = lines[i][: o[2]]
        return "\n".join(lines)

    return st.lists(op, min_size=0, max_size=12).map(apply)


def text_like(sample: str, extra: list[str] | None = None):
    """Mutated samples, arbitrary text, and arbitrary text made of the sample's own lines."""
    return st.one_of(
        mutated_lines(sample, extra),
        st.text(max_size=400),
        st.lists(st.sampled_from(sample.split("\n") + JUNK_LINES), max_size=40).map("\n".join),
    )


JSON_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-2**70, 2**70), st.floats(allow_nan=False),
                         st.text(max_size=30))
JSON_VALUES = st.recursive(JSON_SCALARS, lambda kids: st.one_of(
    st.lists(kids, max_size=4), st.dictionaries(st.text(max_size=10), kids, max_size=4)), max_leaves=12)


# ---- targets: (strategy, check) per parser --------------------------------------------------------
# A check gets (value, ctx); ctx holds per-run state such as a seeded project.
