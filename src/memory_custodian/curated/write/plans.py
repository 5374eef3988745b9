"""Preview, then apply the same plan: a plan id binds an `--apply` to what the preview showed.

A plan id is a digest of the command, the exact bytes of every file the plan read and every
file it would write. `--apply --plan ID` rebuilds the plan under the lock and refuses when the id
differs, so files changed since the preview are never overwritten by a stale decision. The id is
a one-way digest: it never reveals a forgotten topic.
"""

from __future__ import annotations

import hashlib
import json
import os

from ...base import fsutil
from ...base.errors import Conflict, InvalidInput, NotFound
from ...base.records import Record, field
from .journal import ABSENT, Change, digest_text

TYPE_CHECKING = False  # not `typing`'s: importing it costs every fresh process
if TYPE_CHECKING:
    from typing import Any

PLAN_ID_LENGTH = 12


class Reader:
    """Reads memory files (loudly, as UTF-8) and remembers the digest of each one it read.

    Commands work on the text with `\n` endings and no byte-order mark (`fsutil.read_utf8`); a
    change is written back in the file's own style — a BOM kept, CRLF endings kept when most of its
    lines had them — so adding one entry to a file saved on Windows changes one entry in its diff,
    not every line."""

    def __init__(self, memory_dir):
        self.memory_dir = os.fspath(memory_dir)
        self.digests: dict[str, str] = {}
        self._cache: dict[str, str | None] = {}
        self._style: dict[str, tuple[bool, bool]] = {}  # rel -> (BOM, CRLF endings)

    def read(self, rel: str) -> str | None:
        """The file's text, or None when it does not exist."""
        if rel in self._cache:
            return self._cache[rel]
        path = self.path_of(rel)
        self._inside(path)
        if os.path.isdir(path):
            raise InvalidInput("expected a file, found a folder", path=str(path))
        try:
            with open(path, "rb") as fh:
                raw = fh.read()  # once: the digest, the text and its style are of the same bytes
        except FileNotFoundError:
            raw = None
        except NotADirectoryError as exc:  # `archive` (say) is a file where a folder must be
            raise InvalidInput(f"{_file_on_the_way(self.memory_dir, rel)} is a file where a folder must be; move it "
                               "out of the way and run the command again — nothing was changed",
                               path=self.path_of(rel)) from exc
        text = None
        self.digests[rel] = ABSENT
        if raw is not None:
            self.digests[rel] = hashlib.sha256(raw).hexdigest()
            text = fsutil.decode_utf8(raw, path)
            crlf = raw.count(b"\r\n")
            self._style[rel] = (raw.startswith(b"\xef\xbb\xbf"), crlf > raw.count(b"\n") - crlf)
        self._cache[rel] = text
        return text

    def required(self, rel: str) -> str:
        """The text of a file the command cannot do without (the manifest); a missing one is NotFound."""
        text = self.read(rel)
        if text is None:
            raise NotFound("is missing; nothing was changed — run {verb:init} to make the memory folder whole",
                           path=self.path_of(rel))
        return text

    def path_of(self, rel: str) -> str:
        return os.path.join(self.memory_dir, rel)

    def _inside(self, path: str) -> None:
        # a symlinked file or folder must not let a write land outside the memory folder
        if os.path.islink(path) or not fsutil.inside(os.path.realpath(path), os.path.realpath(self.memory_dir)):
            raise InvalidInput("leaves the memory folder through a symlink; replace the link with a real file "
                               "or folder", path=str(path))

    def change(self, rel: str, new: str | None) -> Change:
        self.read(rel)
        bom, crlf = self._style.get(rel, (False, False))
        if new is not None:
            new = ("\ufeff" if bom else "") + (new.replace("\n", "\r\n") if crlf else new)
        return Change(rel, new, self.digests[rel])


def _file_on_the_way(memory_dir: str, rel: str) -> str:
    """The first folder of `rel` that is a file on disk, as the user would name it (`archive`)."""
    parts = rel.split("/")[:-1]
    for depth in range(1, len(parts) + 1):
        if os.path.isfile(os.path.join(memory_dir, *parts[:depth])):
            return "/".join(parts[:depth])
    return rel


class Plan(Record):
    """`command` names it without private input ("forget --mode hard"); `inputs` maps each file read to
    its digest; `lines` is the human preview, one line each; `details` the extra JSON fields."""

    command: str
    changes: list[Change]
    inputs: dict[str, str]
    lines: list[str] = field(default_factory=list)
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def effective(self) -> list[Change]:
        return [c for c in self.changes if (c.new is None and c.old_digest != ABSENT) or
                (c.new is not None and digest_text(c.new) != c.old_digest)]

    @property
    def plan_id(self) -> str:
        payload = json.dumps(
            {
                "command": self.command,
                "inputs": sorted(self.inputs.items()),
                "outputs": sorted((c.path, digest_text(c.new)) for c in self.effective),
            },
            sort_keys=True,
        )
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:PLAN_ID_LENGTH]

    def check_plan_id(self, expected: str | None) -> None:
        if expected is None:
            return
        if expected.strip().lower() != self.plan_id:
            raise Conflict(
                f"plan {expected} no longer matches the memory files (they changed since the preview, "
                f"or the arguments differ; current plan is {self.plan_id}) — nothing was changed; "
                "run the preview again and review it"
            )

    def changes_summary(self) -> list[dict]:
        return [{"path": c.path, "action": c.action} for c in sorted(self.effective, key=lambda c: c.path)]


class PlanResult(Record):
    """What a write command returns: whether it `applied`, the files it changes (`{"path", "action"}`),
    the preview `plan` lines, the `plan_id` an apply re-checks, what an interrupted write `recovered`
    (None if nothing), and the `command`; each command's subclass adds its own fields, filled from
    its plan's details. `to_dict()` is the JSON document `--format json` prints."""

    applied: bool
    changes: list[dict[str, str]]
    plan: list[str]
    plan_id: str
    recovered: str | None
    command: str

    def to_dict(self) -> dict:
        return self.as_dict()
