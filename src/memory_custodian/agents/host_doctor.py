"""`doctor`'s check of each configured host: its hook commands answer, its MCP server lists its tools.

Only hosts `init --agent` wired are checked (their files hold our entries). Each hook command runs
as the host runs it — through a shell, a bare PATH, a payload shaped like the host's, the host's
timeout — and the MCP server is spoken to in plain JSON-RPC over its stdio (this module imports no
MCP SDK), up to `tools/list`.
"""

from __future__ import annotations

import json
import os
import selectors
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

from ..base.launcher import is_our_command, not_installed_text
from ..setup.setup_doctor import Finding
from . import hosts

TYPE_CHECKING = False  # not `typing`'s: importing it costs a fresh process
if TYPE_CHECKING:
    from typing import Any

HOOK_ENV_PATH = "/usr/bin:/bin"  # a host's child may get no more PATH than this
DOCTOR_SESSION = "memory-custodian-doctor"


MCP_TIMEOUT_S = 20
MCP_PROTOCOL = "2025-06-18"


def check_hosts(memory) -> list[Finding]:
    out: list[Finding] = []
    servers_of: list[tuple[str, str, dict]] = []
    for name in hosts.HOSTS:
        spec = hosts.load(name)
        commands, servers = _wiring(memory.root_str, spec)
        for event, command in commands:
            out.append(_check_hook(memory.root_str, spec, event, command))
        servers_of.extend((name, where, entry) for where, entry in servers)
    # each server takes a second or more to start: start them side by side, report them in order
    with ThreadPoolExecutor(max_workers=max(1, len(servers_of))) as pool:
        out.extend(pool.map(lambda s: _check_server(memory.root_str, *s), servers_of))
    if not out:
        out.append(Finding("hosts", True, "no host wired (`memory-custodian init --agent all` wires them)"))
    return out


def _wiring(root: str, spec) -> tuple[list, list]:
    """(event, hook command) and (file, MCP server entry) pairs this host's files hold for us."""
    commands, servers = [], []
    for rel, kind in spec.files:
        path = os.path.join(root, rel)
        if not os.path.isfile(path) or kind == "md":
            continue
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
        if kind == "toml":
            entry = _toml_server(text)
            if entry:
                servers.append((rel, entry))
            continue
        data = json.loads(text) if text.strip() else {}
        for event, groups in (data.get("hooks") or {}).items():
            for group in groups if isinstance(groups, list) else ():
                for hook in group.get("hooks", ()) if isinstance(group, dict) else ():
                    if isinstance(hook, dict) and is_our_command(str(hook.get("command", ""))):
                        commands.append((event, hook["command"]))
        entry = (data.get("mcpServers") or {}).get("memory-custodian")
        if isinstance(entry, dict):
            servers.append((rel, entry))
    return commands, servers


def _toml_server(text: str) -> dict | None:
    if sys.version_info >= (3, 11):
        import tomllib

        return tomllib.loads(text).get("mcp_servers", {}).get("memory-custodian")
    # Python 3.10 has no tomllib: the block is ours, so its two lines are known
    command = next((line.split("=", 1)[1].strip() for line in text.splitlines() if line.startswith("command =")), None)
    args = next((line.split("=", 1)[1].strip() for line in text.splitlines() if line.startswith("args =")), None)
    return {"command": json.loads(command), "args": json.loads(args)} if command and args else None


def _check_hook(root: str, spec, event: str, command: str) -> Finding:
    action = spec.events.get(event)
    area = f"{spec.name} hook {event}"
    if action is None:
        return Finding(area, False, f"{event} is not an event this version handles",
                       f"rerun `memory-custodian init --agent {spec.name}`")
    started = time.monotonic()
    try:
        proc = run_command(["/bin/sh", "-c", command], root, payload_for(spec.name, event, action, root),
                           spec.hook_timeout_s)
    except subprocess.TimeoutExpired:
        return Finding(area, False, f"no answer within the host's {spec.hook_timeout_s} s timeout",
                       "run `memory-custodian reindex`, then `memory-custodian doctor` again")
    ms = (time.monotonic() - started) * 1000
    if proc.returncode != 0:
        told = " ".join((proc.stderr or proc.stdout).split())[:200]
        return Finding(area, False, f"`{command}` exited {proc.returncode}: {told}",
                       f"rerun `memory-custodian init --agent {spec.name}` from the installation you use")

    if not_installed_text(spec.name) in proc.stdout:
        return Finding(area, False, "found no installation and told the agent memory is not installed here",
                       "run `memory-custodian init` in this clone from the installation you use")
    if proc.stderr.strip():
        return Finding(area, False, f"answered in {ms:.0f} ms but said: {' '.join(proc.stderr.split())[:300]}",
                       "fix what it names (the agent was told the same)")
    return Finding(area, True, f"answered in {ms:.0f} ms")


def _check_server(root: str, host: str, where: str, entry: dict) -> Finding:
    area = f"{host} MCP server ({where})"
    argv = [str(entry.get("command", "")), *[str(a) for a in entry.get("args", ())]]
    program = shutil.which(argv[0], path=HOOK_ENV_PATH) if not os.path.isabs(argv[0]) else argv[0]
    if program is None or not os.access(program, os.X_OK):
        return Finding(area, False, f"{argv[0]!r} is not a program a host finds (PATH {HOOK_ENV_PATH})",
                       f"rerun `memory-custodian init --agent {host}` from the installation you use")
    argv[0] = program
    tools = _list_tools(argv, root)
    if isinstance(tools, str):
        return Finding(area, False, tools, f"rerun `memory-custodian init --agent {host}`; then `memory-custodian mcp` "
                                           "by hand shows the server's own error")
    return Finding(area, True, f"started and listed {len(tools)} tools")


def _list_tools(argv: list[str], root: str):
    """The tool names the server lists, or what went wrong (a string)."""
    messages: list[dict[str, Any]] = [{"jsonrpc": "2.0", "id": 1, "method": "initialize",
                 "params": {"protocolVersion": MCP_PROTOCOL, "capabilities": {},
                            "clientInfo": {"name": "memory-custodian-doctor", "version": "1"}}},
                {"jsonrpc": "2.0", "method": "notifications/initialized"},
                {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}]
    env = {"PATH": HOOK_ENV_PATH, "HOME": os.environ.get("HOME", root)}
    proc = subprocess.Popen(argv, cwd=root, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env)
    assert proc.stdin is not None and proc.stdout is not None  # both were asked for as pipes
    answer: dict = {}
    try:
        for message in messages:
            proc.stdin.write(json.dumps(message) + "\n")
            proc.stdin.flush()
            if message.get("id") is None:
                continue
            got = _answer(proc, message["id"])
            if isinstance(got, str):
                return got
            answer = got
        return [tool.get("name") for tool in answer.get("result", {}).get("tools", ())]
    finally:
        proc.kill()
        proc.communicate()


def _answer(proc, want: int) -> dict | str:
    deadline = time.monotonic() + MCP_TIMEOUT_S
    with selectors.DefaultSelector() as sel:
        sel.register(proc.stdout, selectors.EVENT_READ)
        while time.monotonic() < deadline:
            if not sel.select(timeout=deadline - time.monotonic()):
                break
            line = proc.stdout.readline()
            if not line:
                return f"the server exited (code {proc.poll()}) before answering"
            try:
                data = json.loads(line)
            except ValueError:
                return f"the server wrote a line that is not JSON-RPC: {line.strip()[:120]}"
            if data.get("id") == want:
                return data if "result" in data else f"the server answered with an error: {data.get('error')}"
    return f"no answer within {MCP_TIMEOUT_S} s"


def run_command(argv: list[str], cwd: str, stdin: str, timeout: float):
    """A host's command run as the host runs it: a bare environment, its payload, its timeout."""
    env = {"PATH": HOOK_ENV_PATH, "HOME": os.environ.get("HOME", cwd)}
    return subprocess.run(argv, cwd=cwd, input=stdin, capture_output=True, text=True, timeout=timeout, env=env)


def payload_for(host: str, event: str, action: str, root: str) -> str:
    data: dict[str, object] = {"session_id": DOCTOR_SESSION, "cwd": root, "hook_event_name": event}
    if action == "prompt":
        data["prompt"] = "memory-custodian doctor: is the memory reachable?"
    elif action == "start":
        data["source"] = "startup"
    elif action == "file":
        data.update(tool_name="doctor-no-tool", tool_input={})
    return json.dumps(data)
