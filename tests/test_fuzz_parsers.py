"""Hypothesis over every parser and entry point, with the targets of `benchmarks/fuzz.py`.

The benchmark runs thousands of cases per target and prints the table for the README; here each
target runs a few dozen derandomized cases on every CI run, so a regression shows up at once.
A result or a `CustodianError` (with nothing changed on disk) is the only acceptable outcome.
"""

from __future__ import annotations

import importlib.util
import sys

import pytest
from conftest import REPO


def _load_fuzz():
    spec = importlib.util.spec_from_file_location("mc_fuzz", REPO / "benchmarks" / "fuzz.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["mc_fuzz"] = module
    spec.loader.exec_module(module)
    return module


fuzz = _load_fuzz()

# Pure parsers are cheap: more cases. Project-level targets write files: fewer.
EXAMPLES = {"manifest": 40, "markdown_units": 40, "ledger_lines": 40, "ledger_replay": 20, "edit_buffer": 20,
            "truth_file": 25, "config": 25, "hook_payload": 20, "mcp_arguments": 20, "curated_read": 8,
            "curated_add": 15, "curated_forget": 15, "ledger_remember": 15, "secrets_scan": 40, "globs": 40,
            "hostile_inputs": 15}


@pytest.fixture(scope="module")
def ctx(tmp_path_factory):
    return fuzz.setup_context(tmp_path_factory.mktemp("fuzz"))


def test_every_target_is_listed():
    assert set(EXAMPLES) == set(fuzz.TARGET_NAMES)


# target -> the open bug it still finds (strict: the xfail flips when it is fixed)
# (the absurd-expiry bug is found by the full run's 1,500 cases of ledger_remember, not by these 15;
# tests/test_nasty_inputs.py::test_absurd_expiry_is_a_clear_error pins it.)
KNOWN: dict[str, str] = {}


@pytest.mark.parametrize("target", [pytest.param(t, marks=pytest.mark.xfail(strict=True, raises=fuzz.Bug, reason=KNOWN[t]))
                                    if t in KNOWN else t for t in fuzz.TARGET_NAMES])
def test_fuzz_target(ctx, target):
    stats = fuzz.run_target(target, ctx, EXAMPLES[target])
    assert stats["cases"] >= EXAMPLES[target] // 2


def test_the_harness_catches_a_stray_exception(ctx):
    """Guard against a vacuous harness: a non-CustodianError is a finding."""
    def boom(_):
        raise ValueError("bare")

    with pytest.raises(fuzz.Bug):
        fuzz.expect_result_or_error("boom", boom, "x")


def test_the_harness_catches_a_changed_file_after_an_error(ctx, tmp_path):
    from memory_custodian.base.errors import InvalidInput

    def write_then_fail(path):
        path.write_text("changed", encoding="utf-8")
        raise InvalidInput("refused")

    target = tmp_path / "f.md"
    target.write_text("orig", encoding="utf-8")
    with pytest.raises(fuzz.Bug):
        fuzz.expect_result_or_error("w", write_then_fail, target, memory_dir=tmp_path)
