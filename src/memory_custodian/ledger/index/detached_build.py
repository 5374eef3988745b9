"""The detached process that reads the shards on after a command read its step (`background.start`)."""

from __future__ import annotations

import os
import sys

from ...base.errors import CustodianError
from ...base.fsutil import CACHE_DIR, atomic_write
from ..storage.store import Ledger
from . import background
from .index import Index


def read_on(memory_dir: str) -> None:
    """The detached process (`background.start`): read the shards on, a step per transaction, until
    none is left, then drop the marker (also when a step fails)."""
    index = Index(Ledger(memory_dir))
    failed = os.path.join(memory_dir, CACHE_DIR, background.FAILED)
    try:
        while True:
            os.utime(background.marker(memory_dir))  # alive: a long build is not a dead one
            index.catch_up(budget=(background.STEP_LINES, background.STEP_BYTES), background=False)
            if not index.unread()[0]:
                break
        if os.path.exists(failed):
            os.unlink(failed)
    except Exception as exc:  # no one reads this process's stderr: the commands say it instead
        why = exc.one_line() if isinstance(exc, CustodianError) else f"{type(exc).__name__}: {exc}"
        atomic_write(failed, why[:background.SHOWN_FAILURE].encode("utf-8", "replace"))
        raise
    finally:
        index.close()
        try:
            os.unlink(background.marker(memory_dir))
        except FileNotFoundError:
            pass


if __name__ == "__main__":
    read_on(sys.argv[1])
