"""A CLI run inside an agent host records `agent` unless told `--actor human`."""

from __future__ import annotations

import json

import pytest
from conftest import run_cli

from memory_custodian.agents.hosts import AGENT_ENV
from memory_custodian.memory import Memory


@pytest.mark.parametrize("variable", [v for names in AGENT_ENV.values() for v in names])
def test_inside_a_host_the_default_actor_is_agent(tmp_path, variable, monkeypatch):
    for names in AGENT_ENV.values():
        for name in names:
            monkeypatch.delenv(name, raising=False)
    Memory.open(tmp_path).init()
    made = run_cli("remember", "Found while testing.", "--format", "json", cwd=tmp_path, env={variable: "1"})
    note = json.loads(made.stdout)
    assert (note.get("note") or note)["provenance"] == "agent", made.stdout
    person = run_cli("remember", "Said by a person.", "--actor", "human", "--format", "json", cwd=tmp_path,
                     env={variable: "1"})
    assert (json.loads(person.stdout).get("note") or json.loads(person.stdout))["provenance"] == "human"
    outside = run_cli("remember", "Typed in a terminal.", "--format", "json", cwd=tmp_path)
    assert (json.loads(outside.stdout).get("note") or json.loads(outside.stdout))["provenance"] == "human"
