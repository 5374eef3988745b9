"""`diff` over real git: a branch's memory changes listed exactly, in text, JSON and Markdown, with the forgotten
text nowhere; a committed head, a merge commit, a shallow clone, and the reviewer's flags."""

from __future__ import annotations

import json
import os
import subprocess

import pytest
from conftest import run_cli

from memory_custodian import Memory
from memory_custodian.base.errors import NotFound, Refused

SECRET_TITLE = "Vault passphrase hint"
SECRET_BODY = "The staging vault opens with the squeamish ossifrage phrase"
SECRET_WORDS = ("squeamish", "ossifrage", "passphrase", "vault")
IDENTITY = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@x", "GIT_COMMITTER_NAME": "t",
            "GIT_COMMITTER_EMAIL": "t@x", "GIT_CONFIG_NOSYSTEM": "1"}


def git(root, *args) -> str:
    proc = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, env={**os.environ, **IDENTITY})
    assert proc.returncode == 0, (args, proc.stderr)
    return proc.stdout.strip()


@pytest.fixture(scope="module", autouse=True)
def identity():
    saved = {k: os.environ.get(k) for k in IDENTITY}
    os.environ.update(IDENTITY)
    yield
    for k, v in saved.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


@pytest.fixture(scope="module")
def branch(tmp_path_factory):
    """main with two notes; branch `feature` adds a decision, supersedes one note, forgets the other and
    adds an agent's directive; the last change is left uncommitted in the working tree."""
    root = tmp_path_factory.mktemp("repo")
    git(root, "init", "-q", "-b", "main")
    memory = Memory.open(root)
    memory.init()
    old = memory.remember("Retries back off linearly up to 30 s.", kind="decision", title="Retry backoff is linear")
    secret = memory.remember(SECRET_BODY, kind="finding", title=SECRET_TITLE, tags=("ossifrage",))
    git(root, "add", "-A")
    git(root, "commit", "-qm", "base")
    git(root, "checkout", "-qb", "feature")
    memory.add("Keep the journal append-only", "decision", reasons=["crash safety first"])
    new = memory.supersede(old.id, "Retries back off exponentially, capped at 60 s.",
                           reason="linear stormed the gateway", title="Retry backoff is exponential")
    memory.forget_note(secret.id)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "feature")
    rule = memory.remember("Never push to main without a review.", kind="directive", priority="high", actor="agent",
                           title="Never push to main without a review")
    return {"root": root, "old": old.id, "new": new.id, "secret": secret.id, "rule": rule.id}


def _no_secret(text: str) -> None:
    low = text.lower()
    assert not [w for w in SECRET_WORDS if w in low], "forgotten text in the output"


def _exactly(d: dict, ids: dict) -> None:
    assert [(c["change"], c["note"], c["title"]) for c in d["directives"]] == [
        ("created", ids["rule"], "Never push to main without a review")]
    assert [(c["file"], c["change"], c["heading"].split(" - ", 1)[1]) for c in d["curated"]] == [
        ("decisions.md", "added", "Keep the journal append-only")]
    assert d["tombstones"] == []
    assert [(c["change"], c["note"], c.get("by")) for c in d["ledger"]] == [
        ("superseded", ids["old"], ids["new"]), ("forgotten", ids["secret"], None)]
    forgotten = d["ledger"][1]
    assert set(forgotten) == {"change", "note", "at", "actor"}  # its id, when and who: nothing of its text
    assert [f["code"] for f in d["flags"]] == ["agent-directive-unquoted"]


def test_a_branch_lists_exactly_what_it_changed_in_all_three_formats(branch):
    root = branch["root"]
    proc = run_cli("diff", "--format", "json", cwd=root)
    assert proc.returncode == 0, proc.stderr
    _exactly(json.loads(proc.stdout), branch)
    _no_secret(proc.stdout)
    text = run_cli("diff", cwd=root)
    assert text.returncode == 0
    _no_secret(text.stdout + text.stderr)
    lines = text.stdout.splitlines()
    assert lines[0].startswith("memory diff docs/memory: merge base with main (") and "working tree" in lines[0]
    assert lines.index("Directives and tombstones") < lines.index("Curated files") < lines.index("Ledger notes")
    assert f"#{branch['old']} \u201cRetry backoff is linear\u201d \u2192 #{branch['new']}" in text.stdout
    assert f"forgotten     #{branch['secret']} (its text is not shown)" in text.stdout
    markdown = run_cli("diff", "--format", "markdown", cwd=root)
    assert markdown.returncode == 0
    _no_secret(markdown.stdout)
    md = markdown.stdout
    assert md.startswith("### Memory changes in `docs/memory`")
    assert md.index("#### For the reviewer") < md.index("#### Directives and tombstones") < md.index(
        "#### Curated files") < md.index("#### Ledger notes")
    assert "```diff" in md and "+Retries back off exponentially, capped at 60 s." in md
    assert f"\\#{branch['rule']}" not in md and f"#{branch['rule']}" in md


def test_two_commits_and_a_merge_commit_compare_as_trees(branch):
    root = branch["root"]
    d = Memory.open(root).diff("main", "feature").to_dict()
    assert [c["change"] for c in d["ledger"]] == ["superseded", "forgotten"] and d["directives"] == []
    assert d["head"]["commit"] == git(root, "rev-parse", "feature")
    clone = root.parent / "merged"
    git(root.parent, "clone", "-q", str(root), str(clone))
    git(clone, "checkout", "-q", "main")
    (clone / "README").write_text("main moves on\n")
    git(clone, "add", "README")
    git(clone, "commit", "-qm", "main moves on")
    git(clone, "merge", "-q", "--no-ff", "--no-edit", "origin/feature")
    merged = Memory.open(clone).diff("HEAD^1", "HEAD").to_dict()
    assert [(c["change"], c["note"]) for c in merged["ledger"]] == [("superseded", branch["old"]),
                                                                     ("forgotten", branch["secret"])]
    assert [c["change"] for c in merged["curated"]] == ["added"]
    _no_secret(json.dumps(merged))
    # a branch that merged main into itself: the default base is the merge base, so main's own change is not its
    git(clone, "checkout", "-q", "-b", "topic", "HEAD^1")
    git(clone, "merge", "-q", "--no-edit", "main")
    assert Memory.open(clone).diff(None, "HEAD").empty


def test_a_shallow_clone_says_what_to_fetch(branch, tmp_path):
    root = branch["root"]
    clone = tmp_path / "shallow"
    git(tmp_path, "clone", "-q", "--depth", "1", "--branch", "feature", f"file://{root}", str(clone))
    with pytest.raises(NotFound, match="no default branch here"):
        Memory.open(clone).diff()
    git(clone, "fetch", "-q", "--depth", "1", "origin", "main:refs/remotes/origin/main")
    proc = run_cli("diff", cwd=clone)
    assert proc.returncode == 1 and proc.stdout == ""
    assert "this clone is shallow and the merge base of HEAD and origin/main is not in it" in proc.stderr
    assert "git fetch --deepen=200 origin" in proc.stderr and "git fetch --unshallow origin" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    git(clone, "fetch", "-q", "--unshallow", "origin")
    d = Memory.open(clone).diff(None, "HEAD").to_dict()
    assert [c["change"] for c in d["ledger"]] == ["superseded", "forgotten"]


def test_a_curated_forget_names_the_file_only(branch, tmp_path):
    root = tmp_path / "r"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    memory = Memory.open(root)
    memory.init()
    memory.add("Use the ossifrage cipher for staging secrets", "decision", reasons=["the vault wants it"])
    git(root, "add", "-A")
    git(root, "commit", "-qm", "base")
    memory.forget("ossifrage", mode="hard", apply=True)
    d = memory.diff()
    _no_secret(json.dumps(d.to_dict()) + d.text() + d.markdown())
    assert [(c.file, c.change, c.heading) for c in d.curated] == [("decisions.md", "forgotten", "")]
    assert [c.change for c in d.tombstones] == ["added"]


def test_the_reviewer_flags(tmp_path):
    root = tmp_path / "r"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    memory = Memory.open(root)
    memory.init()
    human = memory.remember("Always run the full suite before merging.", kind="directive", title="Run the suite")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "base")
    memory.add("Choose the journal format " + "with a long explanation of every trade-off " * 12, "decision",
               reasons=["measured"], allow_long=True)
    memory.revoke(human.id, reason="too slow", actor="agent")
    manifest = root / "docs/memory/manifest.md"
    manifest.write_text(manifest.read_text().replace("- brief.md\n", "- brief.md\n- areas/billing.md\n", 1))
    (root / "docs/memory/constraints.md").write_text(
        "# Constraints\n\n" + "".join(f"- Constraint {i}: keep the {i}th invariant of the store intact always\n"
                                      for i in range(200)))
    codes = [f.code for f in memory.diff().flags]
    assert codes == ["agent-withdrew-directive", "entry-over-budget", "file-over-budget", "route-missing"], codes
    assert memory.diff("HEAD", "HEAD").empty


def test_bad_input_is_one_loud_line(tmp_path, branch):
    proc = run_cli("diff", "no-such-branch", cwd=branch["root"])
    assert proc.returncode == 2 and "'no-such-branch' names no commit" in proc.stderr and proc.stdout == ""
    loose = tmp_path / "loose"
    loose.mkdir()
    Memory.open(loose).init()
    with pytest.raises(Refused, match="not inside a git repository"):
        Memory.open(loose).diff()


def test_a_commit_with_no_shared_history_is_named_as_the_command_takes_it(branch):
    root = branch["root"]
    git(root, "checkout", "-q", "--orphan", "island")
    git(root, "commit", "-qm", "unrelated", "--allow-empty")
    try:
        proc = run_cli("diff", cwd=root)  # BASE defaults to the merge base with main: there is none
    finally:
        git(root, "checkout", "-q", "feature")
    assert proc.returncode == 1 and "share no history: name BASE as a commit" in proc.stderr, proc.stderr
    assert "--base" not in proc.stderr


def test_the_scoped_fold_gives_what_folding_every_note_gives(branch):
    """The diff folds only the notes it depends on (`ledger_scope`); folding them all must say the same."""
    from memory_custodian.history import diff as D
    from memory_custodian.history.gitsource import Repo, working_files
    from memory_custodian.history.snapshot import Snapshot

    memory = Memory.open(branch["root"])
    repo = Repo(memory.root_str, memory.memory_dir_str)
    for base, head in (("main", "feature"), ("feature", "main"), ("main", None)):
        base_side, head_side = D.resolve(repo, base, head)
        found = []
        for scoped in (True, False):
            files = (working_files(memory.memory_dir_str) if head_side.commit is None
                     else repo.files_at(head_side.commit))
            before = Snapshot(base_side.ref, base_side.commit, base_side.at, repo.files_at(base_side.commit))
            after = Snapshot(head_side.ref, head_side.commit, head_side.at, files)
            found.append(D.compare(before, after, base_side, head_side, repo.memory_rel, scoped=scoped).to_dict())
        assert found[0] == found[1], (base, head)


def test_memory_text_cannot_become_markup_in_the_markdown(tmp_path):
    root = tmp_path / "r"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    memory = Memory.open(root)
    memory.init()
    git(root, "add", "-A")
    git(root, "commit", "-qm", "base")
    memory.remember("Body.", kind="finding",
                    title="See [the docs](http://evil.example) <img src=x onerror=alert(1)> | x")
    memory.remember("Body.", kind="finding", title="Bidi safe\u202etxt and \x1b[31mred")
    d = memory.diff()
    md = d.markdown()
    assert "\\[the docs\\](http://evil.example)" in md and "&lt;img src=x onerror=alert(1)&gt;" in md and "\\|" in md
    assert "<img" not in md and "](http" not in md.replace("\\](http", "")
    assert "\u202e" not in md + d.text() and "\x1b" not in md + d.text()


def test_an_entry_that_only_lost_the_blank_line_after_it_is_not_changed():
    """What `compact --archive-oldest` leaves: the new last entry of decisions.md ends the file."""
    from memory_custodian.curated.parse.units import split_units
    from memory_custodian.history.curated_diff import file_changes

    base = "# Decisions\n\n## 2026-12-02 - B\nDecision:\nb\n\n## 2026-12-01 - A\nDecision:\na\n"
    head = "# Decisions\n\n## 2026-12-02 - B\nDecision:\nb\n"
    got = file_changes("decisions.md", split_units(base).units, split_units(head).units, frozenset(), frozenset())
    assert [(c.change, c.heading) for c in got] == [("removed", "2026-12-01 - A")]
