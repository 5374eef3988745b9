"""A progress line on stderr for work that can take seconds; callers show it only on a terminal."""

from __future__ import annotations

import sys


class Progress:
    """`with Progress(label) as bar: work(progress=bar.show)`; `show` takes the fraction done (0..1)."""

    def __init__(self, label: str):
        self.label = label
        self.percent = -1

    def show(self, fraction: float) -> None:
        percent = max(0, min(100, int(fraction * 100)))
        if percent != self.percent:
            self.percent = percent
            sys.stderr.write(f"\r{self.label} {percent:3d}%")
            sys.stderr.flush()

    def __enter__(self):
        self.show(0)
        return self

    def __exit__(self, *exc):
        sys.stderr.write("\n")
        sys.stderr.flush()
        return False
