"""The report pages: where recall misses (`eval` against a truth set), what `doctor` finds, and the
adoption report."""

from __future__ import annotations

from .html import bar_chart, esc, href, layout, table


def eval_page(memory, truth: str | None, base: str) -> str:
    if truth is None:
        return layout(base, "eval", "Recall misses", "<p>No truth set was given. Start the viewer with "
                      "<code>serve --truth FILE.jsonl</code> (the labelled queries <code>eval</code> reads) to see "
                      "where recall misses, stage by stage.</p>")
    report = memory.evaluate(truth)
    o, k = report["overall"], report["k"]
    head = (f"<p>{o['queries']} queries, {o['pairs']} expected notes · limit {report['limit']} · as of "
            f"{esc(report['now'])} · truth <code>{esc(report['truth'])}</code></p>"
            + table([f"recall@{kk}" for kk in report["ks"]] + ["MRR", "nDCG@10", f"miss rate at {report['limit']}"],
                    [[f"{o[f'recall@{kk}']:.3f}" for kk in report["ks"]]
                     + [f"{o['mrr']:.3f}", f"{o['ndcg@10']:.3f}", f"{o['miss_rate']:.3f}"]]))
    chart = "<h2>Misses by stage</h2>" + bar_chart(report["miss_classes"].items())
    groups = ""
    for title, key in (("By kind", "by_kind"), ("By priority", "by_priority"), ("By category", "by_category")):
        if key in report:
            groups += f"<h2>{title}</h2>" + table(
                ("group", "expected notes", f"recall@{k}", "miss rate"),
                [(esc(name), str(g["pairs"]), f"{g[f'recall@{k}']:.3f}", f"{g['miss_rate']:.3f}")
                 for name, g in report[key].items()], num=(1, 2, 3))
    rows = [(esc(m["query"]), f'<a href="{href(base, "/note/" + m["note"])}">#{esc(m["note"])}</a>', esc(_stage(m)),
             esc(m["title"])) for m in report["misses"]]
    misses = "<h2>Every miss</h2>" + (table(("query", "note", "stage", "title"), rows) if rows
                                      else "<p>none: every expected note was shown</p>")
    problems = ""
    if report["truth_errors"] or report["forbidden_shown"]:
        problems = "<h2>Problems with the truth set</h2><ul>" + "".join(
            f"<li class=warn>{esc(e['query_id'])}: #{esc(e['note'])} is {esc(e['problem'])}</li>"
            for e in report["truth_errors"]) + "".join(
            f"<li class=warn>{esc(f['query_id'])}: shown but should not be: "
            + esc(", ".join("#" + n for n in f["notes"])) + "</li>" for f in report["forbidden_shown"]) + "</ul>"
    return layout(base, "eval", "Recall misses", head + chart + groups + misses + problems)


def _stage(miss: dict) -> str:
    if miss["class"] == "below_cutoff":
        return f"ranked {miss['rank']}" if miss.get("rank") else f"ranked below {miss.get('deeper_than')}"
    if miss["class"] == "excluded":
        return f"excluded ({miss['reason']})"
    shared = miss.get("shared_terms") or []
    return "never matched (" + ("shares: " + ", ".join(shared) if shared else "no shared term") + ")"


def doctor_page(memory, base: str) -> str:
    report = memory.doctor()
    verdict = ("<p><span class=\"badge state-active\">ok</span> every shard verified</p>" if report.ok else
               "<p><span class=\"badge state-revoked\">problems</span> run <code>memory-custodian doctor</code>"
               + (" and <code>doctor --repair</code>" if report.repairable else "") + " to fix them</p>")
    counts = table(("shards", "events", "notes"), [(str(report.shards), str(report.events), str(report.notes))],
                   num=(0, 1, 2))
    problems = "<h2>Findings</h2>" + (table(("code", "where", "note", "what"), [
        (esc(p.get("code", "")), esc(p.get("where") or ""), esc(p.get("note") or ""), esc(p.get("message", "")))
        for p in report.problems]) if report.problems else "<p>none</p>")
    warnings = "".join(f"<p class=warn>{esc(w)}</p>" for w in report.warnings)
    trimmed = ("<h2>Kept from earlier repairs</h2><ul>" + "".join(f"<li>{esc(n)}</li>" for n in report.trimmed_earlier)
               + "</ul>") if report.trimmed_earlier else ""
    return layout(base, "doctor", "Doctor", "<h2>Ledger shards</h2>" + verdict + counts + problems + warnings + trimmed
                  + _setup(memory.diagnose()))


def _setup(findings) -> str:
    """The rest of the setup, piece by piece; hosts are left out, since checking one runs its hooks."""
    rows = [(f'<span class="badge state-{"active" if f.ok else "revoked"}">{"ok" if f.ok else "FAIL"}</span>',
             esc(f.area), esc(f.detail), "" if f.ok else esc(f.fix)) for f in findings]
    return ("<h2>The rest of the setup</h2>" + table(("", "piece", "what was seen", "fix"), rows)
            + "<p class=muted>Each agent host's hook commands and MCP server are checked by running them, which a "
              "read-only view does not do: run <code>memory-custodian doctor</code> for those.</p>")


def stats_page(memory, base: str) -> str:
    report = memory.stats()
    t = report.totals
    head = (f"<p>{len(report.sessions)} session(s) logged in <code>{esc(report.store)}</code></p>"
            + table(("injected notes", "injected tokens", "recalls", "expands", "notes written", "checkpoints"),
                    [(str(t["injected_notes"]), str(t["injected_tokens"]), str(t["recalls"]), str(t["expands"]),
                      str(sum(t["written"].values())), str(sum(t["checkpoints"].values())))], num=range(6)))
    flags = "<h2>Flags</h2>" + ("<ul>" + "".join(f"<li class=warn>{esc(f)}</li>" for f in report.flags) + "</ul>"
                                if report.flags else "<p>none</p>")
    charts = ("<h2>Hooks fired</h2>" + bar_chart(sorted(t["hooks"].items()))
              + "<h2>Notes written (kind/actor)</h2>" + bar_chart(sorted(t["written"].items())))
    rows = [(esc(s.last[:16] + "Z"), esc(s.host),
             f'<a href="{href(base, "/session/" + s.session)}">{esc(s.session)}</a>', str(sum(s.hooks.values())),
             f"{s.injected_notes} ({s.injected_tokens} tokens)", "yes" if s.files_edited else "no",
             esc(_pairs(s.written)), esc(_pairs(s.checkpoints))) for s in report.sessions]
    sessions = "<h2>Sessions, newest first</h2>" + (table(
        ("last seen", "host", "session", "hooks", "injected", "edited files", "wrote", "checkpoints"), rows,
        num=(3,)) if rows else "<p class=muted>no hook has logged a session here yet</p>")
    torn = (f"<p class=warn>{report.unreadable_lines} unreadable line(s) in the log were skipped (a torn write)</p>"
            if report.unreadable_lines else "")
    return layout(base, "stats", "Adoption", head + flags + charts + sessions + torn)


def _pairs(counts: dict) -> str:
    return ", ".join(f"{k} {v}" for k, v in sorted(counts.items())) or "none"
