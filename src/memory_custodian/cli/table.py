"""Every command of the CLI, declared once: name, group, help, one example, arguments, handler.

`cli/argv.py` reads a command's arguments from this table (argparse, in `cli/parser.py`, is built
from it for help and mistakes), and only that command's handler module is imported. A new command is
one entry here plus its handler.
"""

from __future__ import annotations

from ..agents.hosts import HOSTS
from .spec import (
    ACTOR,
    APPLY,
    DATA,
    FORMAT,
    MEMORY,
    NOTE_FIELDS,
    NOTE_ID,
    PLAN,
    QUERY,
    RECALL_OPTIONS,
    TEXT,
    Arg,
    Command,
    flag,
    kept_fields,
    opt,
    verb,
)

PROG = "memory-custodian"
GROUPS = ("curated", "ledger", "agents", "maintenance")

_TABLE = (
    # ---- curated tier ----
    Command("init", "curated", "curated_read:init",
            "Create docs/memory/ with the six core files (never overwriting anything).",
            "memory-custodian init --agent claude", (
                *MEMORY,
                flag("--extended", "Also create preferences.md, changelog.md, rules/, profiles/, areas/, archive/."),
                opt("--agent", "agents", repeat=True, choices=(*HOSTS, "all"),
                    help="Also install this agent's entry points (repeatable)."),
                flag("--remove", "Remove the agent entry points instead (with --agent; default all)."),
                flag("--force-agent", "Replace a MemoryCustodian 0.9 block in AGENTS.md/CLAUDE.md/GEMINI.md with ours."),
                flag("--with-codex", "Same as --agent codex (MemoryCustodian 0.9's spelling)."),
                flag("--with-claude", "Same as --agent claude (MemoryCustodian 0.9's spelling)."),
                flag("--with-gemini", "Same as --agent gemini (MemoryCustodian 0.9's spelling)."),
                flag("--repair", "Also add what manifest.md lacks (protocol metadata, routes, module index), "
                                 "keeping every curated file, unknown metadata and comments."),
                flag("--replace-existing", "Preview replacing every existing core file with init's template; "
                                           "--apply writes it (curated text is lost)."),
                flag("--apply", "With --replace-existing: write the replacement.", dest="apply_"),
                FORMAT,
            ), "Writes at the repository's top level (from any folder inside it; outside one, pass --project-root). "
               "Also creates the private .cache/ folder, the .gitattributes rules and this clone's merge drivers "
               "and installation setting in .git/config, so branches merge memory entry by entry."),
    Command("read", "curated", "curated_read:read",
            "Print the context pack for a task: routed files packed to budget, then what was left out.",
            "memory-custodian read --task implementation --path src/app.py", (
                *MEMORY,
                opt(("--task", "-t"), default="default", metavar="TASK",
                    help="planning, implementation, artifact, preferences, history, maintenance, general — "
                         "or an alias (default: default, as in MemoryCustodian 0.9.1)."),
                opt("--area", "areas", repeat=True, metavar="NAME", help="Also load areas/NAME.md (repeatable)."),
                opt("--profile", "profiles", repeat=True, metavar="NAME",
                    help="Also load profiles/NAME.md (repeatable)."),
                opt("--rule", "rules", repeat=True, metavar="NAME", help="Also load rules/NAME.md (repeatable)."),
                opt("--path", "paths", repeat=True, metavar="PATH",
                    help="A file the task touches; loads every area whose globs match (repeatable)."),
                opt(("--query", "-q"), metavar="Q", help="What the task is about; ranks the ledger's recall lines."),
                flag("--names-only", "List the loaded files instead of printing them."),
                flag("--explain", "Also list every module considered, and why it was or was not loaded."),
                flag("--strict", "A missing required file is an error (exit 2, no pack)."),
                FORMAT,
            )),
    Command("status", "curated", "curated_read:status",
            "One screen: each file's tokens against its budget, entry counts, inbox size.",
            "memory-custodian status", (*MEMORY, FORMAT)),
    Command("add", "curated", "curated_write:add",
            "Add one entry to curated memory, in MemoryCustodian's format (refuses credentials).",
            'memory-custodian add "Keep the API synchronous" --type decision --reason "callers block anyway"', (
                *MEMORY,
                Arg("text", "TEXT"),
                opt("--type", "kind", required=True, metavar="TYPE",
                    help="decision, constraint, preference, tombstone, rule, profile, area or inbox."),
                opt("--reason", "reasons", repeat=True, metavar="R", help="Why (decision and tombstone; repeatable)."),
                opt("--scope", metavar="S", help="Where the decision or tombstone applies."),
                opt("--name", metavar="N", help="The rule, profile or area file name (rules/N.md)."),
                opt("--area", metavar="A", help="Write a decision/constraint/preference/tombstone to areas/A.md."),
                flag("--allow-long", "Accept a decision over its 120-token entry budget (after review)."),
                opt("--title", metavar="T", help="The heading of a decision or tombstone (default: the text's first "
                                                "words, cut at a word boundary)."),
                FORMAT,
            )),
    Command("forget", "curated", "curated_write:forget",
            "Remove a topic from curated memory (preview, then --apply), or one ledger note with --note.",
            "memory-custodian forget staging-server --mode hard", (
                *MEMORY,
                Arg("topic", "TOPIC", optional=True),
                opt("--mode", choices=("soft", "hard", "purge"), default="soft",
                    help="soft: leave a tombstone naming the topic; hard: a generic tombstone; purge: archive too, "
                         "no tombstone."),
                APPLY, PLAN,
                flag("--allow-broad-match", "Allow a topic under 4 characters or matching 3+ entries."),
                opt("--note", "note_id", metavar="ID", help="Instead: hard-delete one ledger note (#id or prefix)."),
                flag("--yes", "With --note: do not ask for confirmation."),
                FORMAT,
            ), "Matching is whole-word and case-insensitive. Hard and purge never print the topic."),
    Command("enable", "curated", "curated_write:enable",
            "Create an optional module and index it: preferences, changelog, rules, profiles, archive, rules/NAME, "
            "profiles/NAME or areas/NAME. Idempotent.",
            'memory-custodian enable areas/api --path "src/api/**"', (
                *MEMORY,
                Arg("module", "MODULE"),
                opt("--path", "paths", repeat=True, metavar="GLOB",
                    help="For areas/NAME: load it when a touched path matches (repeatable; `*`, `?`, `**`)."),
                FORMAT,
            )),
    # ---- ledger tier ----
    Command("remember", "ledger", "ledger:remember",
            "Record a note in the ledger and print its id (TEXT may be - for stdin).",
            'memory-custodian remember "The test DB must be reset before each run" --kind gotcha --path tests/',
            (TEXT, *NOTE_FIELDS, opt("--supersedes", metavar="ID", help="The note this one replaces (one txn)."),
             ACTOR, *DATA)),
    Command("supersede", "ledger", "ledger:supersede",
            "Replace note ID by a new note with TEXT (same kind, tags and paths unless given); print the new id.",
            'memory-custodian supersede k7m2x9qa "Reset the test DB with make db-reset" --reason "new target"',
            (NOTE_ID, TEXT, opt("--reason", required=True, help="Why the old note is replaced."),
             *kept_fields(NOTE_FIELDS), ACTOR, *DATA)),
    verb("revoke", "Revoke note ID: it was wrong (shown only as a warning from now on).",
         'memory-custodian revoke k7m2x9qa --reason "the bug was fixed upstream"'),
    verb("flag-stale", "Flag note ID as possibly out of date (reinstate confirms it).",
         'memory-custodian flag-stale k7m2x9qa --reason "the build moved to meson"'),
    verb("reinstate", "Make note ID active again (after stale, superseded, revoked or expired).",
         'memory-custodian reinstate k7m2x9qa --reason "still true after the upgrade"'),
    Command("promote", "ledger", "ledger:promote",
            "Raise the provenance of note ID (e.g. after a person verified it).",
            "memory-custodian promote k7m2x9qa --to human", (
                NOTE_ID,
                opt("--to", required=True, choices=("agent", "user-stated", "human"),
                    help="The new provenance; only a person can promote to human."),
                ACTOR, *DATA,
            )),
    verb("expire", "Expire note ID now (it no longer applies).",
         'memory-custodian expire k7m2x9qa --reason "the release shipped"'),
    Command("recall", "ledger", "ledger:recall",
            "Ranked index lines of the notes matching QUERY (without QUERY: by priority, then recency).",
            'memory-custodian recall "database reset" --kind gotcha --limit 5', (
                QUERY, *RECALL_OPTIONS,
                *DATA,
            )),
    Command("expand", "ledger", "ledger:expand",
            "Full notes, framed by provenance and state, with tags, paths, dates and the supersession chain.",
            "memory-custodian expand k7m2x9qa", (Arg("ids", "ID", many=True), *DATA)),
    Command("history", "ledger", "ledger:history", "The events of note ID in order: who, when, why.",
            "memory-custodian history k7m2x9qa", (NOTE_ID, *DATA)),
    Command("export", "ledger", "ledger_text:export",
            "Render the ledger to a read-only Markdown mirror (every note, with its state).",
            "memory-custodian export --check", (
                *MEMORY,
                opt("--path", metavar="FILE",
                    help="Where to write, relative to the project root and inside it (default: the configured path, "
                         "else docs/memory/MEMORY.md)."),
                flag("--check", "Write nothing; exit 1 with a short diff if the file is not up to date."),
                flag("--enable", "Keep the mirror rendered after every write (recorded in docs/memory/config.json, "
                                 "committed)."),
                flag("--disable", "Stop re-rendering after writes (the file is left as it is)."),
                FORMAT,
            ), "The output is byte-identical for an unchanged ledger on any machine, so `export --check` can guard it "
               "in CI or a pre-commit hook. Nothing reads the mirror back: change memory with `edit`, `remember`, "
               "`supersede` or `revoke`."),
    Command("edit", "ledger", "ledger_text:edit",
            "Edit the active notes as Markdown in $EDITOR; the result is checked in as events.",
            "memory-custodian edit --checkout notes.md", (
                *MEMORY,
                opt("--checkout", metavar="FILE", help="Write the active notes to FILE and stop."),
                opt("--checkin", metavar="FILE", help="Check FILE back in as ledger events."),
                opt("--reason", metavar="R", help="Why removed notes are revoked (and changed ones superseded)."),
                ACTOR,
                FORMAT,
            ), "A changed block becomes a new note superseding the old one, a deleted block a `revoke` (needs --reason "
               "or a `- reason:` line), a new block a new note. If a note you touched changed in the ledger meanwhile, "
               "nothing is written. For scripts and agents: `edit --checkout FILE`, edit FILE, then "
               "`edit --checkin FILE [--reason R]`."),
    # ---- agent hosts ----
    Command("mcp", "agents", "agents:mcp",
            "Serve the memory as MCP tools over stdio (for Claude Code, Codex, Gemini CLI).",
            "memory-custodian mcp --project-root .", MEMORY,
            "Tools: memory_context, memory_recall, memory_expand, memory_history (read-only); memory_remember, "
            "memory_supersede, memory_revoke, memory_flag_stale, memory_reinstate, memory_propose. The server writes "
            "as `agent`. `init --agent` registers it with each host."),
    Command("hook", "agents", "agents:hook",
            "Run a lifecycle hook: read the host's JSON on stdin, print the context it should add.",
            "memory-custodian hook --host claude SessionStart < payload.json", (
                Arg("event", "EVENT"),
                opt("--host", choices=HOSTS, default="claude",
                    help="Which agent host is calling (its payload and output shapes differ)."),
                opt("--task", metavar="TASK", help="Task category for the session-start pack (default implementation)."),
                MEMORY[0].replace(type=None),  # fail open: a bad folder is the hook's one line and exit 0
                MEMORY[1],
            ), "EVENT is the host's event name (claude: SessionStart, UserPromptSubmit, PreToolUse, PreCompact, Stop, "
               "SubagentStop, SessionEnd; codex: the same without SubagentStop and SessionEnd; gemini: SessionStart, "
               "BeforeAgent, AfterTool, PreCompress, AfterAgent, SessionEnd). A hook never fails the host: any error is "
               "one line on stderr and exit 0. `init --agent` installs these."),
    Command("stats", "agents", "agents:stats",
            "Is memory used? Hooks fired, notes injected, recalls, expands, notes written, checkpoints; with flags.",
            "memory-custodian stats --format json", DATA,
            "Per session (newest first) and in total, from the hooks' usage log in .cache/ (owner-only, bounded) and "
            "the ledger. Flags: the last sessions edited files and recorded nothing; a note injected 40 times and "
            "never expanded; no hook for 7 days."),
    Command("merge-driver", "agents", "agents:merge_driver",
            "Merge one memory file as git asks (registered by `init` in .git/config; not run by hand).",
            "memory-custodian merge-driver curated %O %A %B %P", (
                Arg("kind", "KIND"), Arg("base", "BASE"), Arg("ours", "OURS"), Arg("theirs", "THEIRS"),
                Arg("path", "PATH"),
            ), "KIND is curated (entry by entry against the base: a change made on one side is taken, a forget "
               "on either side wins, an entry both changed differently becomes one marked entry that `check` "
               "reports, exit 1), ledger (both sides' events, forgets applied) or mirror (MEMORY.md rendered "
               "again from both branches' ledger). The result is written to OURS."),
    # ---- maintenance ----
    Command("check", "maintenance", "curated_read:check",
            "Validate the memory folder: files, manifest, routes, budgets, fences, index. Exit 1 on any problem.",
            "memory-custodian check --privacy", (
                *MEMORY,
                flag("--privacy", "Instead: scan every memory file (and the ledger) for credentials; names kind and "
                                  "place, never the value."),
                FORMAT,
            )),
    Command("compact", "maintenance", "curated_write:compact",
            "Drop duplicates and tombstoned inbox items; list candidates; archive the oldest over budget.",
            "memory-custodian compact --target decisions.md --archive-oldest", (
                *MEMORY,
                opt("--target", metavar="FILE",
                    help="Only this file (e.g. decisions.md); default: every file compact handles."),
                APPLY, PLAN,
                flag("--archive-oldest", "Move the oldest entries of an over-budget decisions/changelog file to "
                                         "archive/."),
                FORMAT,
            )),
    Command("migrate", "maintenance", "curated_write:migrate",
            "Bring manifest.md's protocol metadata and routes up to date (never downgrades).",
            "memory-custodian migrate --apply", (*MEMORY, APPLY, PLAN, FORMAT)),
    Command("reindex", "maintenance", "ledger:reindex",
            "Rebuild the derived index (.cache/index.sqlite) from the ledger shards.",
            "memory-custodian reindex", DATA),
    Command("doctor", "maintenance", "ledger:doctor",
            "Check the whole setup: ledger shards and index, curated files, mirror, merge rules, hosts' wiring.",
            "memory-custodian doctor --repair", (
                flag("--repair", "Remove torn tails and incomplete txns (with a backup) and rebuild the index."),
                flag("--yes", "With --repair: also delete the text of notes a forget line from elsewhere (a merge) "
                              "forgot — check who forgot what first."),
                flag("--ledger-only", "Check only the ledger's shards, not the rest of the setup (quicker)."),
                *DATA,
            ), "Ledger: torn lines, incomplete txns, versions, ops, illegal transitions, duplicates. Then one line per "
               "piece of the setup, each FAIL with its fix: curated files and manifest (as `check`), the index, the "
               "export mirror, .gitattributes and the merge drivers in .git/config, the ignored .cache/, and every "
               "wired host: each hook command run as the host runs it (bare PATH, its payload, its timeout) and each "
               "MCP server started up to its tool list. Exit 1 on any problem."),
    Command("serve", "maintenance", "serve:serve",
            "Serve a local, read-only web view of the context pack, the ledger, each note's history and reports.",
            "memory-custodian serve --open", (
                opt("--port", type="int", minimum=0, maximum=65535, default=8765,
                    help="TCP port (0: any free port)."),
                opt("--host", default="127.0.0.1", metavar="ADDR",
                    help="Address to bind (default 127.0.0.1; anything else needs --allow-remote)."),
                flag("--allow-remote", "Allow a non-loopback --host; every URL then carries a random token."),
                opt("--truth", metavar="TRUTH",
                    help="A truth set (the JSONL that eval reads): adds the recall-miss report."),
                flag("--open", "Open the viewer in the default web browser.", dest="open_"),
                *DATA,
            ), "Prints the URL (with --format json one object: url, host, port) and serves until Ctrl-C. Loopback "
               "only by default; requests with a non-loopback Host header are refused, and nothing can be changed "
               "from it: every change goes through the CLI, the MCP server or edit."),
    Command("diff", "maintenance", "history:diff",
            "What a branch changes in memory, for review: entries, notes, directives and tombstones first, flags.",
            "memory-custodian diff origin/main --format markdown >> \"$GITHUB_STEP_SUMMARY\"", (
                Arg("base", "BASE", optional=True),
                Arg("head", "HEAD", optional=True),
                opt("--format", "fmt", choices=("text", "json", "markdown"), default="text",
                    help="Output format (markdown: for a pull-request comment or a CI job summary)."),
                *MEMORY,
            ), "BASE defaults to the merge base of HEAD with the default branch (origin/HEAD, main or master), HEAD "
               "to the working tree. Lists curated entries added, changed, removed, archived or forgotten per file, "
               "and ledger notes created, superseded, revoked, flagged stale, expired, reinstated, promoted or "
               "forgotten; a forgotten entry or note is named by its file or id only, never its text. Flags: an "
               "agent's directive with no quote of the user's, an entry or file over its budget, a route to a "
               "missing file. A shallow clone that lacks the merge base is refused (exit 1) with the git fetch "
               "that brings it. Reads git only; changes nothing."),
    Command("eval", "maintenance", "evaluate:eval_cmd",
            "Run the labelled queries in TRUTH (JSONL) through recall and report what it missed.",
            "memory-custodian eval docs/memory/recall-truth.jsonl --min-recall 0.8", (
                Arg("truth", "TRUTH", type="file"),
                opt("--k", type="int", minimum=1, default=10,
                    help="The headline cut: recall@K is what --min-recall gates."),
                opt("--limit", type="int", minimum=1, default=10,
                    help="The cutoff an agent sees; the miss rate is measured here."),
                opt("--min-recall", type="float", minimum=0.0, maximum=1.0, metavar="X",
                    help="Exit 1 when recall@K is below X (0..1), so CI can gate memory quality."),
                opt("--now", metavar="ISO",
                    help="Evaluate as of this UTC time (e.g. 2026-12-01T00:00:00.000Z), so expiry is reproducible."),
                opt("--show", type="int", minimum=0, default=30,
                    help="How many misses the text report lists (JSON lists all)."),
                *DATA,
            ), 'Each line: {"query": "...", "relevant": ["k7m2x9qa", ...]} with optional "paths", "kind", "tags" '
               'filters (passed to recall as a caller would) and "forbidden" ids that must not be shown. Reports '
               "recall@1/5/10/20, MRR, nDCG@10 and the miss rate at --limit, overall, per kind and per priority; every "
               "miss is classified by the stage that lost it (excluded by a state or filter, ranked below the cutoff, "
               "never matched), and truth pointing at unknown or forgotten notes is flagged."),
)

COMMANDS: dict[str, Command] = {command.name: command for command in _TABLE}
