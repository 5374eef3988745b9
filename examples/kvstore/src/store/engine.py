"""A toy key-value engine: an append-only journal replayed into a dict."""

import json
from pathlib import Path


class Engine:
    def __init__(self, path: Path):
        self.path = Path(path)
        self.data: dict[str, str] = {}
        if self.path.exists():
            for line in self.path.read_text(encoding="utf-8").splitlines():
                record = json.loads(line)
                self.data[record["k"]] = record["v"]

    def put(self, key: str, value: str) -> None:
        with self.path.open("a", encoding="utf-8") as journal:
            journal.write(json.dumps({"k": key, "v": value}) + "\n")
        self.data[key] = value

    def get(self, key: str) -> str | None:
        return self.data.get(key)
