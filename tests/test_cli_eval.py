"""`memory-custodian eval` as a fresh process: reports, exit codes, and the CI floor on the truth set."""

from __future__ import annotations

import json
import shutil

import pytest
from conftest import REPO, run_cli

BENCH = REPO / "benchmarks" / "recall"
NOW = "2026-12-01T00:00:00.000Z"  # the truth set's reference time (task checkpoints expire after 30 days)

# The CI floor: recall@10 on the held-out test split, as achieved by the committed ranker, minus a
# small margin. A ranking change that loses more than the margin fails the build; one that gains
# should raise this number.
# The thesaurus re-ranking left the software set where it was (0.710) and raised the conversational
# one (0.540 -> 0.633); a note's context (`ledger/recall/context.py`) raised it to 0.712 and the
# held-out chats from 0.679 to 0.783 (CJK bigrams: 0.604 -> 0.679), the software set unchanged.
TEST_SPLIT_RECALL_AT_10 = 0.710
FLOOR = round(TEST_SPLIT_RECALL_AT_10 - 0.02, 3)
# the same for the conversational truth set (benchmarks/conversation/) and for the held-out chats
# (benchmarks/heldout/, frozen test split: a floor guards it, nothing is tuned on it)
CONVERSATION = REPO / "benchmarks" / "conversation"
HELDOUT = REPO / "benchmarks" / "heldout"
FLOORS = {"software": (BENCH, FLOOR), "conversation": (CONVERSATION, round(0.712 - 0.02, 3)),
          "held-out": (HELDOUT, round(0.783 - 0.02, 3))}


@pytest.fixture
def project(tmp_path):
    root = tmp_path / "proj"
    root.mkdir()
    assert run_cli("init", "--project-root", str(root)).returncode == 0
    ids = []
    for text, kind in (("workspace lock released before daemon restart", "gotcha"),
                       ("never introduce SQLite for sessions", "directive")):
        out = run_cli("remember", text, "--kind", kind, "--project-root", str(root), "--format", "json")
        assert out.returncode == 0, out.stderr
        ids.append(json.loads(out.stdout)["id"])
    truth = tmp_path / "truth.jsonl"
    truth.write_text(json.dumps({"query": "daemon restart lock", "relevant": [ids[0]]}) + "\n"
                     + json.dumps({"query": "session store design", "relevant": [ids[1]], "kind": ["directive"]}) + "\n",
                     encoding="utf-8")
    return root, truth, ids


def test_eval_json_report(project):
    root, truth, _ids = project
    out = run_cli("eval", str(truth), "--project-root", str(root), "--format", "json")
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["overall"]["recall@10"] == 1.0 and report["recall"] == 1.0
    assert report["misses"] == [] and report["truth_errors"] == []
    assert set(report["by_kind"]) == {"gotcha", "directive"}
    assert list(report) == sorted(report)


def test_eval_text_and_min_recall_gate(project, tmp_path):
    root, truth, ids = project
    bad = tmp_path / "bad.jsonl"
    bad.write_text(truth.read_text() + json.dumps({"query": "invoice rounding", "relevant": [ids[0]]}) + "\n")
    ok = run_cli("eval", str(bad), "--project-root", str(root), "--min-recall", "0.5")
    assert ok.returncode == 0, ok.stderr
    assert "recall@10 0.667" in ok.stdout and "never matched (no shared term)" in ok.stdout
    assert "meets the floor 0.500" in ok.stdout
    fail = run_cli("eval", str(bad), "--project-root", str(root), "--min-recall", "0.9", "--k", "5")
    assert fail.returncode == 1
    assert "recall@5 0.667 is below --min-recall 0.900" in fail.stderr
    js = run_cli("eval", str(bad), "--project-root", str(root), "--min-recall", "0.9", "--format", "json")
    assert js.returncode == 1 and json.loads(js.stdout)["passed"] is False


def test_eval_bad_truth_exits_2_naming_the_line(project, tmp_path):
    root, truth, _ids = project
    broken = tmp_path / "broken.jsonl"
    broken.write_text(truth.read_text() + "{oops\n")
    out = run_cli("eval", str(broken), "--project-root", str(root))
    assert out.returncode == 2
    assert f"{broken}:3:" in out.stderr and out.stdout == ""
    missing = run_cli("eval", str(tmp_path / "none.jsonl"), "--project-root", str(root))
    assert missing.returncode == 2 and "truth file not found" in missing.stderr


def _meets_floor(tmp_path, bench, floor):
    root = tmp_path / "bench"
    shutil.copytree(bench / "project", root, ignore=shutil.ignore_patterns(".cache"))
    out = run_cli("eval", str(bench / "truth-test.jsonl"), "--project-root", str(root), "--now", NOW,
                  "--min-recall", str(floor), "--format", "json", timeout=120)
    report = json.loads(out.stdout)
    assert out.returncode == 0, f"recall@10 {report['recall']} fell below the floor {floor}: {out.stderr}"
    assert report["truth_errors"] == [] and report["forbidden_shown"] == []
    assert report["overall"]["queries"] >= 80
    return report


@pytest.mark.parametrize("truth", sorted(FLOORS))
def test_truth_set_test_split_meets_the_ci_floor(tmp_path, truth):
    """The committed ranker on the held-out split: a regression past the margin fails the build."""
    _meets_floor(tmp_path, *FLOORS[truth])


def test_truth_set_shape():
    """At least 1,000 notes and 300 queries, a held-out third, every hard case in both splits."""
    corpus = [json.loads(x) for x in (BENCH / "corpus.jsonl").read_text().splitlines()]
    rows = {s: [json.loads(x) for x in (BENCH / f"truth-{s}.jsonl").read_text().splitlines()] for s in ("train", "test")}
    assert len(corpus) >= 1000
    assert len(rows["train"]) + len(rows["test"]) >= 300
    assert abs(len(rows["test"]) / (len(rows["train"]) + len(rows["test"])) - 1 / 3) < 0.02
    assert not {q["id"] for q in rows["train"]} & {q["id"] for q in rows["test"]}
    hard = {"negation", "paraphrase", "symbol", "file", "path-anchored", "superseded"}
    for split in rows.values():
        assert hard <= {q["category"] for q in split}
    ids = {n["id"] for n in corpus}
    assert all(r in ids for split in rows.values() for q in split for r in q["relevant"])


def test_conversation_truth_set_shape():
    """Dialogue turns as notes, questions in natural language; the test split holds out whole event
    kinds, so nothing tuned on train has seen a test question's wording."""
    corpus = [json.loads(x) for x in (CONVERSATION / "corpus.jsonl").read_text().splitlines()]
    rows = {s: [json.loads(x) for x in (CONVERSATION / f"truth-{s}.jsonl").read_text().splitlines()]
            for s in ("train", "test")}
    assert len(corpus) >= 1000 and len(rows["train"]) + len(rows["test"]) >= 400
    assert not {q["event"] for q in rows["train"]} & {q["event"] for q in rows["test"]}
    assert {"temporal", "single-hop", "paraphrase", "detail"} <= {q["category"] for q in rows["test"]}
    ids = {n["id"] for n in corpus}
    assert all(set(q["relevant"]) <= ids for split in rows.values() for q in split)
