"""What a fresh hook process may load beyond the interpreter's own start-up, and what each costs.

Hooks run on every prompt, so every module on their path is paid each time: the figures are each
module's own import time in µs (`python -X importtime`, the fastest of 15 fresh hooks on a 2-core
machine under load, bytecode cached; see docs/performance.md). A module that appears here for the
first time fails this test: import it inside the function that needs it, or measure it and add it.
A module that no hook loads any more fails it too, so the list stays the path's own.
"""

from __future__ import annotations

import json
import subprocess
import sys

# the package's modules (as `memory_custodian` + the key), µs each
OWN = {
    ".": 123, ".__main__": 81, ".agents": 56, ".agents.cold_index": 68, ".agents.hooks": 230, ".agents.hosts": 95,
    ".agents.hosts.adapter": 170, ".agents.hosts.claude": 69, ".agents.recall_view": 105, ".agents.writeback": 86,
    ".base": 50, ".base.errors": 219, ".base.fence": 121, ".base.fsutil": 253, ".base.limits": 71,
    ".base.locking": 85, ".base.pack_parts": 104, ".base.project": 70, ".base.records": 133,
    ".base.secret_rules": 191, ".base.secrets": 164, ".base.textsafe": 531, ".base.tokens": 124, ".cli": 61,
    ".cli.agents": 75, ".cli.argv": 90, ".cli.output": 98, ".cli.run": 132, ".cli.spec": 250, ".cli.table": 465,
    ".cli.terms": 97, ".cli.values": 72, ".curated": 65, ".curated.manifest": 59, ".curated.manifest.globs": 108,
    ".curated.manifest.lines": 136, ".curated.manifest.reader": 100, ".curated.manifest.routing": 247,
    ".curated.pack": 78, ".curated.pack.context_pack": 129, ".curated.pack.cutting": 169,
    ".curated.pack.pack_text": 152, ".curated.pack.reading": 182, ".curated.parse": 57,
    ".curated.parse.conflicts": 71, ".curated.parse.units": 247, ".ledger": 51, ".ledger.api": 166,
    ".ledger.frames": 100, ".ledger.index": 57, ".ledger.index.background": 159, ".ledger.index.cold_start": 104,
    ".ledger.index.grow": 218, ".ledger.index.in_force": 82,
    ".ledger.index.index": 231, ".ledger.index.index_file": 150,
    ".ledger.index.index_rows": 154, ".ledger.pack_sections": 119,
    ".ledger.params": 184, ".ledger.recall": 56, ".ledger.recall.ranking": 639,
    ".ledger.recall.recall": 114, ".ledger.recall.recall_plan": 153, ".ledger.recall.recall_result": 130,
    ".ledger.recall.recall_scans": 206, ".ledger.recall.tiers": 69, ".ledger.storage": 53,
    ".ledger.storage.fold": 202, ".ledger.storage.ids": 251, ".ledger.storage.inputs": 195,
    ".ledger.storage.model": 196, ".ledger.storage.paths": 98, ".ledger.storage.store": 303, ".memory": 186,
    ".session": 73, ".session.auto_checkpoint": 91, ".session.checkpoint": 96, ".session.rule_prompts": 74,
    ".session.rule_sentences": 235, ".session.sessions": 173, ".session.usage_log": 87,
}
# the standard library's, beyond what `python -c pass` loads
STDLIB = {
    "_heapq": 103, "heapq": 116,  # collections.Counter.most_common
    "__future__": 95, "_collections": 43, "_datetime": 180, "_functools": 492, "_json": 138, "_operator": 49,
    "_sqlite3": 604, "_sre": 48, "collections": 538, "collections.abc": 76, "contextlib": 456, "copyreg": 101,
    "datetime": 683, "enum": 952, "errno": 45, "fcntl": 137, "fnmatch": 81, "functools": 382, "itertools": 115,
    "json": 109, "json.decoder": 326, "json.encoder": 292, "json.scanner": 306, "keyword": 75, "math": 168,
    "operator": 234, "re": 318, "re._casefix": 70, "re._compiler": 241, "re._constants": 239, "re._parser": 235,
    "reprlib": 103, "sqlite3": 99, "sqlite3.dbapi2": 162, "types": 172,
}
# loaded only when the index catches up with shards that grew (a hash of what was read)
CATCH_UP_ONLY = {"hashlib", "_hashlib", "_blake2"}
NEVER = {"argparse", "typing", "dataclasses", "inspect", "pathlib", "subprocess", "mcp", "textwrap", "uuid"}

PROBE = ("import sys\nfloor = set(sys.modules)\nimport io, json, os\n"
         "from memory_custodian.__main__ import main\n"
         "sys.stdin = io.TextIOWrapper(io.BytesIO(sys.argv[1].encode()))\nsys.stdout = open(os.devnull, 'w')\n"
         "sys.argv = ['memory-custodian', 'hook', '--host', 'claude', sys.argv[2]]\n"
         "try:\n    main()\nexcept SystemExit:\n    pass\n"
         "sys.stderr.write(json.dumps(sorted(set(sys.modules) - floor)))")


def _loaded(root, event: str, payload: dict) -> set[str]:
    proc = subprocess.run([sys.executable, "-c", PROBE, json.dumps(payload), event], cwd=root, capture_output=True,
                          text=True)
    return set(json.loads(proc.stderr.splitlines()[-1]))


def test_a_fresh_hook_loads_only_the_listed_modules(tmp_path):
    from memory_custodian import Memory

    mem = Memory.open(tmp_path)
    mem.init()
    mem.remember("Never push to main directly", kind="directive")
    mem.remember("The retry budget is shared by every queue worker", kind="gotcha", paths=["src/queue.py"])
    mem.index()  # caught up, as the hooks of a session find it
    base = {"session_id": "s1", "cwd": str(tmp_path), "transcript_path": "/tmp/t.jsonl"}
    start = _loaded(tmp_path, "SessionStart", {**base, "hook_event_name": "SessionStart", "source": "startup"})
    prompt = _loaded(tmp_path, "UserPromptSubmit", {**base, "hook_event_name": "UserPromptSubmit",
                                                     "prompt": "Why does the retry budget break the queue worker?"})
    allowed = {("memory_custodian" + k if k != "." else "memory_custodian") for k in OWN} | set(STDLIB)
    new = sorted((start | prompt) - allowed - CATCH_UP_ONLY)
    assert new == [], "new on the hook path: import it lazily, or measure it and list it"
    assert sorted((start | prompt) & NEVER) == []
    own = {m for m in start | prompt if m.startswith("memory_custodian")}
    assert sorted(m for m in allowed if m.startswith("memory_custodian") and m not in own) == [], "no hook loads these"
    assert sum(OWN.values()) + sum(STDLIB.values()) < 25_000  # µs: the path's whole import cost, as measured
