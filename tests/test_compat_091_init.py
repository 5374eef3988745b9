"""MemoryCustodian 0.9.1 compatibility on the folder 0.9.1's own `init` lays out: exit codes and bytes.

Every test starts from `mc091_init.init_091` (0.9.1's templates byte for byte, no `.cache/`), runs
our command the way a 0.9.1 user's script would, and checks the exit code and every byte on disk.
Where we differ on purpose the test holds our form and `docs/compatibility.md` gives the row.
"""

from __future__ import annotations

import pytest
from mc091_init import curate_brief, init_091, template_091
from test_compat_091_data import mc, tree

from memory_custodian.curated.write.entries import today

D = today()
GUARD = "Do not reintroduce unless the user explicitly reverses this."


def mem(root, name: str) -> str:
    return (root / "docs/memory" / name).read_text(encoding="utf-8")


def write(root, name: str, text: str) -> None:
    path = root / "docs/memory" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def run(root, *args: str, code: int = 0):
    proc = mc(root, *args)
    assert proc.returncode == code, (args, proc.stdout, proc.stderr)
    return proc


# ---- 1. the template brief ---------------------------------------------------------------------

def test_the_091_template_brief_fails_check_and_status_and_a_curated_folder_passes(tmp_path):
    root = init_091(tmp_path)
    before = tree(root)
    check = run(root, "check", code=1)
    assert check.stdout.splitlines()[0] == ("docs/memory/brief.md:1: problem: uncurated-brief: brief.md is still the "
                                            "template; describe the project so every task starts from it")
    assert "1 problem" in check.stdout
    assert "problem: brief.md: brief.md is still the template" in run(root, "status", code=1).stdout
    assert tree(root) == before
    curate_brief(root)  # the rest of 0.9.1's layout is clean: its manifest template included
    assert run(root, "check").stdout.endswith("6 files checked: 0 problems, 0 warnings\n")
    run(root, "status")


# ---- 2. a manifest that routes only some tasks -------------------------------------------------

def _route_only_implementation(root) -> None:
    text = mem(root, "manifest.md")
    start, keep, rest, stop = (text.index(h) for h in ("### Planning", "### Implementation", "### User-facing",
                                                       "## Optional module index"))
    write(root, "manifest.md", text[:start] + text[keep:rest] + text[stop:])


def test_a_partly_routed_manifest_serves_its_routed_tasks_out_loud_and_check_exits_1(tmp_path):
    root = init_091(tmp_path)
    curate_brief(root)
    _route_only_implementation(root)
    before = tree(root)
    served = run(root, "read", "--task", "implementation", "--format", "json")
    import json

    pack = json.loads(served.stdout)
    assert pack["loaded"] == ["brief.md", "decisions.md", "constraints.md", "do-not-use.md"]
    said = ("the manifest has no `### ` heading under `## Load by task` for planning, artifact, preferences, history, "
            "maintenance: this pack serves implementation in full, but those tasks are refused — `memory-custodian "
            "check` lists them, `memory-custodian migrate` adds the default routes")
    assert said in pack["warnings"] and said in pack["rendered"]  # never a silent miss: it is in the pack
    assert "- " + said.replace("implementation in full", "general in full") in run(root, "read").stdout
    refused = run(root, "read", "--task", "planning", code=2)
    assert refused.stdout == "" and "serves the planning task" in refused.stderr
    check = run(root, "check", code=1)
    assert check.stdout.count("problem: manifest-task-unrouted:") == 5
    run(root, "status")  # 0.9.1's status does not judge routes
    assert tree(root) == before


@pytest.mark.parametrize("breakage", ["unsafe-route", "no-manifest"])
def test_check_exits_1_on_an_unsafe_route_or_a_missing_manifest(tmp_path, breakage):
    root = init_091(tmp_path)
    curate_brief(root)
    if breakage == "unsafe-route":
        write(root, "manifest.md", mem(root, "manifest.md").replace("- do-not-use.md\n\n### Impl",
                                                                    "- do-not-use.md\n- ../secrets.md\n\n### Impl"))
        code = "manifest-invalid"
    else:
        (root / "docs/memory/manifest.md").unlink()
        code = "core-missing"
    before = tree(root)
    check = run(root, "check", code=1)
    assert "docs/memory/manifest.md" in check.stdout and f"problem: {code}:" in check.stdout
    status = run(root, "status", code=1)
    assert "problem: manifest.md" in status.stdout
    assert tree(root) == before


# ---- 3. status exit codes ------------------------------------------------------------------------

def _decisions(n: int, words: int = 12) -> str:
    body = "".join(f"## 2026-10-{1 + i % 28:02d} - Decision number {n - i}\nDecision:\n"
                   + " ".join(f"w{i}x{j}" for j in range(words)) + f"\nReason:\nBecause {i}.\n\n" for i in range(n))
    return "# Decisions\n\nEntries are newest first.\n\n" + body.rstrip("\n") + "\n"


@pytest.mark.parametrize("case,code,said", [
    ("clean", 0, None),
    ("decisions-over-budget", 1, "problem: decisions.md: "),
    ("preferences-over-budget", 1, "problem: preferences.md: "),
    ("core-missing", 1, "problem: inbox.md: core file is missing"),
    ("protocol-newer", 1, "protocol_version 0.6 is newer than this build reads (0.5)"),
    ("protocol-invalid", 1, "protocol_version 'banana' is not a version number"),
    ("protocol-older", 0, None),  # 0.9.1: "migration available", exit 0
    ("area-over-budget", 0, None),  # 0.9.1's status budgets the core files, preferences and changelog only
])
def test_status_exits_as_091_does(tmp_path, case, code, said):
    root = init_091(tmp_path, extended=True)
    curate_brief(root)
    manifest = mem(root, "manifest.md")
    if case == "decisions-over-budget":
        write(root, "decisions.md", _decisions(40))
    elif case == "preferences-over-budget":
        many = "".join(f"\n- Prefer thing {i} over other thing {i}." for i in range(40))
        write(root, "preferences.md", mem(root, "preferences.md") + many)
    elif case == "core-missing":
        (root / "docs/memory/inbox.md").unlink()
    elif case.startswith("protocol"):
        version = {"protocol-newer": "0.6", "protocol-invalid": "banana", "protocol-older": "0.4"}[case]
        write(root, "manifest.md", manifest.replace("protocol_version: 0.5", f"protocol_version: {version}"))
    elif case == "area-over-budget":
        write(root, "areas/big.md", "# Area: Big\n\n" + "".join(f"- Fact {i} about the big area of the code.\n"
                                                                for i in range(80)))
        write(root, "manifest.md", manifest.replace("### Enabled areas\n- None enabled.",
                                                    "### Enabled areas\n- `areas/big.md`: Load for big."))
    before = tree(root)
    status = run(root, "status", code=code)
    if said:
        assert said in status.stdout
    if case == "area-over-budget":
        assert "areas/big.md" in status.stdout and "OVER BUDGET" in status.stdout
        run(root, "check", code=1)  # check holds every budget, as 0.9.1's does
    assert tree(root) == before


# ---- 4. and 6. compact -----------------------------------------------------------------------

def test_untargeted_archive_oldest_cleans_only_the_inbox(tmp_path):
    root = init_091(tmp_path, extended=True)
    curate_brief(root)
    write(root, "decisions.md", _decisions(40))
    write(root, "inbox.md", "# Memory Inbox\n\nEntries are newest first.\n\n## 2026-11-02\n- Same item\n- Same item\n")
    before = tree(root)
    proc = run(root, "compact", "--archive-oldest", "--apply")
    assert "this compact archived nothing" in proc.stdout
    after = tree(root)
    changed = {k for k in after if after[k] != before.get(k) and "/.cache" not in k}  # a write's lock lives in .cache/
    assert changed == {"docs/memory/inbox.md", "docs/memory/changelog.md"}
    assert mem(root, "inbox.md") == "# Memory Inbox\n\nEntries are newest first.\n\n## 2026-11-02\n- Same item\n"
    assert mem(root, "changelog.md") == (
        f"# Memory Changelog\n\nEntries are newest first.\n\n## {D}\n- Cleaned inbox: removed 1 exact duplicate(s) "
        f"and 0 exact tombstone match(es).\n\n## {D}\n- Enabled MemoryCustodian changelog.\n")


def test_targeted_archive_writes_091s_archive_and_readme(tmp_path):
    root = init_091(tmp_path)
    curate_brief(root)
    decisions = _decisions(40)
    write(root, "decisions.md", decisions)
    manifest = mem(root, "manifest.md")
    run(root, "compact", "--target", "decisions.md", "--archive-oldest", "--apply")
    assert (root / "docs/memory/archive/README.md").read_bytes() == template_091("archive/README.md")
    assert mem(root, "manifest.md") == manifest  # 0.9.1's manifest already keeps archive/ explicit-only
    kept = mem(root, "decisions.md")
    sections = decisions.split("\n\n## ")
    archived = "## " + "\n\n## ".join(sections[len(kept.split("\n\n## ")):])
    assert decisions == kept.rstrip("\n") + "\n\n" + archived
    assert mem(root, f"archive/decisions-{D}.md") == (
        f"# Archived Memory: decisions.md\n\n## {D} - From decisions.md\nReason:\nActive memory exceeded its context "
        "budget; older complete entries were moved to explicit-only archive.\n\n" + archived)


@pytest.mark.parametrize("target", ["constraints.md", "preferences.md"])
def test_targeted_compact_of_bullets_drops_exact_repeats_within_budget_too(tmp_path, target):
    """Kept on purpose (0.9.1 waits until the file is over budget): only a repeated bullet goes."""
    root = init_091(tmp_path, extended=True)
    curate_brief(root)
    head = mem(root, target)
    write(root, target, head + "\n- Must work offline.\n\n- Must stay small.\n\n- Must work offline.\n")
    run(root, "compact", "--target", target, "--apply")
    assert mem(root, target) == head + "\n- Must work offline.\n\n- Must stay small.\n"
    assert mem(root, "changelog.md").startswith(
        f"# Memory Changelog\n\nEntries are newest first.\n\n## {D}\n- Compacted {target}: removed 1 duplicate "
        "bullet(s).\n\n")


# ---- 5. forget ---------------------------------------------------------------------------------

def test_soft_forget_leaves_do_not_use_alone_but_for_its_tombstone(tmp_path):
    root = init_091(tmp_path, extended=True)
    curate_brief(root)
    policy = "\n## Policy note\nWe review every Quasarix change in pairs.\n"
    write(root, "do-not-use.md", mem(root, "do-not-use.md") + policy)
    write(root, "decisions.md", "# Decisions\n\nEntries are newest first.\n\n## 2026-11-30 - Cache Quasarix results\n"
                                "Decision:\nCache Quasarix results for an hour.\n")
    run(root, "forget", "Quasarix", "--apply")
    assert mem(root, "decisions.md") == "# Decisions\n\nEntries are newest first.\n"
    assert mem(root, "do-not-use.md") == (
        "# Do Not Use / Tombstones\n\nTombstones are newest first.\n\n## Tombstone: Quasarix\n" + GUARD
        + f" Reason: the user asked MemoryCustodian to forget this topic. Mode: soft. Date: {D}.\n" + policy)
    assert mem(root, "changelog.md").startswith(
        f"# Memory Changelog\n\nEntries are newest first.\n\n## {D}\n- Forgot topic 'Quasarix' with mode soft.\n\n")


@pytest.mark.parametrize("second", ["Never shard Quasarix by tenant.", "We run quasarixes per region."])
def test_forget_asks_for_broad_match_where_091_does_and_changes_nothing(tmp_path, second):
    """0.9.1 asks for --allow-broad-match once more than one entry holds the topic, inside a word too
    (row 30): the same script is refused here (exit 1), though only whole words are removed."""
    root = init_091(tmp_path)
    curate_brief(root)
    write(root, "decisions.md", "# Decisions\n\nEntries are newest first.\n\n## 2026-11-30 - Cache Quasarix results\n"
                                "Decision:\nCache Quasarix results for an hour.\n")
    write(root, "constraints.md", mem(root, "constraints.md") + f"- {second}\n")
    before = tree(root)
    proc = run(root, "forget", "Quasarix", "--apply", code=1)
    assert "--allow-broad-match" in proc.stderr and tree(root) == before
    run(root, "forget", "Quasarix", "--apply", "--allow-broad-match")
    assert "Quasarix results" not in mem(root, "decisions.md")
    assert ("quasarixes" in mem(root, "constraints.md")) == ("quasarixes" in second)


def test_soft_forget_of_a_topic_nothing_mentions_still_writes_its_tombstone(tmp_path):
    root = init_091(tmp_path)
    run(root, "forget", "Redis", "--apply")
    assert mem(root, "do-not-use.md") == (
        "# Do Not Use / Tombstones\n\nTombstones are newest first.\n\n## Tombstone: Redis\n" + GUARD
        + f" Reason: the user asked MemoryCustodian to forget this topic. Mode: soft. Date: {D}.\n")


def test_hard_forget_writes_091s_redacted_tombstone_and_changelog_line(tmp_path):
    root = init_091(tmp_path, extended=True)
    write(root, "constraints.md", "# Constraints\n\n- Never call Zephyrine from handlers.\n")
    run(root, "forget", "Zephyrine", "--mode", "hard", "--apply")
    assert mem(root, "constraints.md") == "# Constraints\n"
    assert mem(root, "do-not-use.md") == (
        "# Do Not Use / Tombstones\n\nTombstones are newest first.\n\n## Tombstone: Redacted user-requested removal\n"
        "A user-requested topic was removed in hard mode. Do not reconstruct removed content from prior context "
        "unless the user explicitly reverses this request.\n")
    assert f"## {D}\n- Completed hard forget operation.\n" in mem(root, "changelog.md")


# ---- 7. the bytes `add` writes ---------------------------------------------------------------

ADDS = [  # (argv, the kind and target its changelog line names)
    (("Store session state in local JSON files.", "--type", "decision", "--reason", "Portable."),
     "decision", "decisions.md"),
    (("Must work offline.", "--type", "constraint"), "constraint", "constraints.md"),
    (("Must use only the standard library.", "--type", "constraint"), "constraint", "constraints.md"),
    (("Prefer short functions.", "--type", "preference"), "preference", "preferences.md"),
    (("Redis", "--type", "tombstone"), "tombstone", "do-not-use.md"),
    (("MongoDB", "--type", "do-not-use", "--reason", "Schemaless."), "do-not-use", "do-not-use.md"),
    (("Consider encryption.", "--type", "inbox"), "inbox", "inbox.md"),
    (("Consider compression.", "--type", "inbox"), "inbox", "inbox.md"),
    (("Frontend uses htmx.", "--type", "area", "--name", "frontend"), "area", "areas/frontend.md"),
    (("Quote strings exactly.", "--type", "rule", "--name", "output"), "rule", "rules/output.md"),
    (("Squash merge.", "--type", "profile", "--name", "git"), "profile", "profiles/git.md"),
]


def test_add_writes_what_091_writes_on_its_own_folder(tmp_path):
    root = init_091(tmp_path, extended=True)
    manifest = mem(root, "manifest.md")
    for argv, _, _ in ADDS:
        run(root, "add", *argv)
    assert mem(root, "decisions.md") == (f"# Decisions\n\nEntries are newest first.\n\n## {D} - Store session state in "
                                         "local JSON files.\nDecision:\nStore session state in local JSON files.\n"
                                         "Reason:\nPortable.\n")
    assert mem(root, "constraints.md") == ("# Constraints\n\n- Must work offline.\n\n"
                                           "- Must use only the standard library.\n")
    assert mem(root, "preferences.md") == template_091("preferences.md").decode() + "\n- Prefer short functions.\n"
    assert mem(root, "do-not-use.md") == (
        f"# Do Not Use / Tombstones\n\nTombstones are newest first.\n\n## Tombstone: MongoDB\n{GUARD} Reason: "
        f"Schemaless. Date: {D}.\n\n## Tombstone: Redis\n{GUARD} Reason: Added as a rejected or guarded topic. "
        f"Date: {D}.\n")
    assert mem(root, "inbox.md") == (f"# Memory Inbox\n\nEntries are newest first.\n\n## {D}\n"
                                     f"- Consider compression.\n\n## {D}\n- Consider encryption.\n")
    for rel, kind, title, entry in (("areas/frontend.md", "area", "Frontend", "Frontend uses htmx."),
                                    ("rules/output.md", "rule", "Output", "Quote strings exactly."),
                                    ("profiles/git.md", "profile", "Git", "Squash merge.")):
        assert mem(root, rel) == template_091(f"enable/{kind}.md", title).decode() + f"\n- {entry}\n"
    assert mem(root, "manifest.md") == manifest.replace(
        "### Enabled rules\n- None enabled.", "### Enabled rules\n- `rules/output.md`: Load for user-facing artifacts, "
        "publishable text, or copied output.").replace(
        "### Enabled profiles\n- None enabled.", "### Enabled profiles\n- `profiles/git.md`: Load for branch, commit, "
        "merge, rebase, PR, or release-tag workflow tasks.").replace(
        "### Enabled areas\n- None enabled.", "### Enabled areas\n- `areas/frontend.md`: Load when touching UI, "
        "routes, client state, styling, browser behavior, or frontend tests.")
    lines = "".join(f"## {D}\n- Added {kind} memory to {target}.\n\n" for _, kind, target in reversed(ADDS))
    assert mem(root, "changelog.md") == (f"# Memory Changelog\n\nEntries are newest first.\n\n{lines}"
                                         f"## {D}\n- Enabled MemoryCustodian changelog.\n")


def test_a_heading_is_the_first_72_characters_and_a_long_tombstone_keeps_its_text(tmp_path):
    root = init_091(tmp_path)
    text = "Keep the public API synchronous because every caller blocks on the result and async buys nothing."
    run(root, "add", text, "--type", "decision")
    assert mem(root, "decisions.md").endswith(f"\n\n## {D} - {text[:72]}\nDecision:\n{text}\n")
    run(root, "add", text, "--type", "tombstone")  # 0.9.1 would keep only the heading's 72 characters
    assert mem(root, "do-not-use.md").endswith(
        f"\n\n## Tombstone: {text[:72]}\n{text}\n{GUARD} Reason: Added as a rejected or guarded topic. Date: {D}.\n")


def test_adding_the_same_entry_twice_writes_it_once(tmp_path):
    """Kept on purpose (0.9.1 writes it twice): a retried script leaves one entry, and says so."""
    root = init_091(tmp_path, extended=True)
    run(root, "add", "Must work offline.", "--type", "constraint")
    before = tree(root)
    again = run(root, "add", "Must work offline.", "--type", "constraint")
    assert "the same entry is already there; nothing changed" in again.stdout
    assert tree(root) == before


def test_enable_writes_091s_templates(tmp_path):
    root = init_091(tmp_path)
    for module, rel, kind, title in (("area/frontend", "areas/frontend.md", "area", "Frontend"),
                                     ("profile/git", "profiles/git.md", "profile", "Git"),
                                     ("rules/code-style", "rules/code-style.md", "rule", "Code Style")):
        run(root, "enable", module)
        assert (root / "docs/memory" / rel).read_bytes() == template_091(f"enable/{kind}.md", title)
    run(root, "enable", "areas/store")  # a name without a stock description gets 0.9.1's generic one, last (ours)
    assert ("`: Load when touching UI, routes, client state, styling, browser behavior, or frontend tests.\n"
            "- `areas/store.md`: Load when touched files or task scope clearly match this area or the user explicitly "
            "requests it.\n\n") in mem(root, "manifest.md")


def test_init_extended_writes_091s_optional_templates(tmp_path):
    ours = tmp_path / "ours"
    ours.mkdir()
    run(ours, "init", "--extended")
    theirs = init_091(tmp_path / "theirs", extended=True)
    for name in ("preferences.md", "changelog.md", "rules/README.md", "profiles/README.md", "archive/README.md",
                 "inbox.md"):
        assert (ours / "docs/memory" / name).read_bytes() == (theirs / "docs/memory" / name).read_bytes(), name


# ---- 8. init --replace-existing ------------------------------------------------------------------

@pytest.mark.parametrize("extended", [False, True])
def test_replace_existing_on_a_091_folder_replaces_only_what_is_not_a_template(tmp_path, extended):
    root = init_091(tmp_path, extended=extended)
    args = ("init", "--replace-existing") + (("--extended",) if extended else ())
    before = tree(root)
    assert "nothing to replace: every file is a template already" in run(root, *args).stdout
    assert tree(root) == before
    curate_brief(root)
    preview = run(root, *args)
    assert [line for line in preview.stdout.splitlines() if line.startswith("replace ")] == [
        "replace docs/memory/brief.md  (has curated text that would be lost)"]
    kept = {k: v for k, v in tree(root).items() if k != "docs/memory/brief.md"}
    run(root, *args, "--apply")
    after = tree(root)
    assert all(after[k] == v for k, v in kept.items())  # 0.9.1's templates stay byte for byte
    brief = after["docs/memory/brief.md"]
    assert b"TODO" not in brief and brief != before["docs/memory/brief.md"]  # our template brief
