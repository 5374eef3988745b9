"""A long-lived caller (the MCP server, the viewer) loads its calls' modules at start (`Memory.prime`),
so its first call costs what the next ones do: at 749 notes the MCP server's first `memory_context` took
64.6 ms and the next ones 15.7 ms, most of the difference the modules the first call loaded."""

from __future__ import annotations

import json
import subprocess
import sys

from memory_custodian import Memory

PROBE = """
import json, sys
from memory_custodian import Memory
memory = Memory.open(sys.argv[1])
if sys.argv[2] == "prime":
    memory.warm()
    memory.prime()
before = set(sys.modules)
memory.read("implementation", query="retry budget")
hit = memory.recall("retry budget").hits[0]
memory.expand([hit.note.id])
sys.stdout.write(json.dumps(sorted(set(sys.modules) - before)))
"""


def _first_call_loads(root, how: str) -> list[str]:
    out = subprocess.run([sys.executable, "-c", PROBE, str(root), how], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def test_a_primed_process_loads_nothing_on_its_first_calls(tmp_path):
    memory = Memory.open(tmp_path)
    memory.init()
    memory.remember("The retry budget is shared by every queue worker", kind="gotcha")
    memory.remember("Never push to main directly", kind="directive")
    memory.index()
    assert _first_call_loads(tmp_path, "cold"), "an unprimed process loads modules on its first calls"
    assert _first_call_loads(tmp_path, "prime") == []
