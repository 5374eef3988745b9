"""`eval`: measure recall quality against a truth file, and gate it in CI with `--min-recall`."""

from __future__ import annotations

import sys

import click

from . import emit_json, format_option, handle_errors, memory_options, open_memory


@click.command("eval")
@click.argument("truth", type=click.Path(dir_okay=False))
@click.option("--k", "k", default=10, show_default=True, type=click.IntRange(1),
              help="The headline cut: recall@K is what --min-recall gates.")
@click.option("--limit", default=10, show_default=True, type=click.IntRange(1),
              help="The cutoff an agent sees; the miss rate is measured here.")
@click.option("--min-recall", type=click.FloatRange(0.0, 1.0), default=None, metavar="X",
              help="Exit 1 when recall@K is below X (0..1), so CI can gate memory quality.")
@click.option("--now", default=None, metavar="ISO",
              help="Evaluate as of this UTC time (e.g. 2026-12-01T00:00:00.000Z), so expiry is reproducible.")
@click.option("--show", default=30, show_default=True, type=click.IntRange(0),
              help="How many misses the text report lists (JSON lists all).")
@format_option
@memory_options
@handle_errors
def eval_cmd(truth, k, limit, min_recall, now, show, fmt, project_root, memory_dir):
    """Run the labelled queries in TRUTH (JSONL) through recall and report what it missed.

    Each line: {"query": "...", "relevant": ["k7m2x9qa", ...]} with optional "paths", "kind",
    "tags" filters (passed to recall as a caller would) and "forbidden" ids that must not be
    shown. Reports recall@1/5/10/20, MRR, nDCG@10 and the miss rate at --limit, overall, per
    kind and per priority; every miss is classified by the stage that lost it (excluded by a
    state or filter, ranked below the cutoff, never matched), and truth pointing at unknown or
    forgotten notes is flagged.
    """
    from ..ledger.evaluate import evaluate, render_text

    memory = open_memory(project_root, memory_dir)
    report = evaluate(memory, truth, k=k, limit=limit, now=now)
    failed = min_recall is not None and report["recall"] < min_recall
    if min_recall is not None:
        report["min_recall"] = min_recall
        report["passed"] = not failed
    if fmt == "json":
        emit_json(report)
    else:
        click.echo(render_text(report, max_misses=show), nl=False)
        if min_recall is not None:
            verdict = "below" if failed else "meets"
            click.echo(f"recall@{k} {report['recall']:.3f} {verdict} the floor {min_recall:.3f}")
    if failed:
        click.echo(f"error: {truth}: recall@{k} {report['recall']:.3f} is below --min-recall {min_recall:.3f} — "
                   "see the misses above", err=True)
        sys.exit(1)
