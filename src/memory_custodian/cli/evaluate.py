"""`eval`: measure recall quality against a truth file, and gate it in CI with `--min-recall`."""

from __future__ import annotations

from ..ledger.recall.evaluate import evaluate, render_text
from .output import Exit, echo, emit_json, open_memory


def eval_cmd(truth, k, limit, min_recall, now, show, fmt, project_root, memory_dir):
    memory = open_memory(project_root, memory_dir)
    report = evaluate(memory, truth, k=k, limit=limit, now=now)
    failed = min_recall is not None and report["recall"] < min_recall
    if min_recall is not None:
        report["min_recall"] = min_recall
        report["passed"] = not failed
    if fmt == "json":
        emit_json(report)
    else:
        echo(render_text(report, max_misses=show), nl=False)
        if min_recall is not None:
            verdict = "below" if failed else "meets"
            echo(f"recall@{k} {report['recall']:.3f} {verdict} the floor {min_recall:.3f}")
    if failed:
        raise Exit(f"{truth}: recall@{k} {report['recall']:.3f} is below --min-recall {min_recall:.3f} — "
                   "see the misses above", 1)
