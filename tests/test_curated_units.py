"""Semantic units and packing: complete entries, fence-aware boundaries, lossless re-serialisation."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from memory_custodian.base.tokens import estimate_tokens
from memory_custodian.curated.parse.units import make_unit, pack, render, serialize, split_units

SECTIONS = """# Decisions

Entries are newest first.

## 2026-01-02 - Second
Decision:
Use B.

## 2026-01-01 - First
Decision:
Use A.
"""


def test_sections_with_preamble():
    doc = split_units(SECTIONS)
    assert doc.mode == "section"
    assert doc.preamble == "# Decisions\n\nEntries are newest first.\n\n"
    assert [u.heading for u in doc.units] == ["2026-01-02 - Second", "2026-01-01 - First"]
    assert [(u.start_line, u.end_line) for u in doc.units] == [(5, 8), (9, 11)]
    assert doc.units[0].text == "## 2026-01-02 - Second\nDecision:\nUse B.\n\n"


def test_bullets_keep_continuation_lines_even_headings():
    text = "# Prefs\n\n- one\n  more of one\n# Not a boundary\n\n- two\n"
    doc = split_units(text)
    assert doc.mode == "bullet"
    assert [u.heading for u in doc.units] == ["one", "two"]
    assert doc.units[0].text == "- one\n  more of one\n# Not a boundary\n\n"


def test_nested_bullets_are_continuations():
    doc = split_units("- top\n  - nested\n- next\n")
    assert [u.heading for u in doc.units] == ["top", "next"]


def test_body_when_no_boundaries():
    doc = split_units("# Inbox\n\nNothing here.\n")
    assert doc.mode == "body" and doc.preamble == "" and len(doc.units) == 1
    assert doc.units[0].heading == "# Inbox"


def test_fenced_h2_and_bullets_are_never_boundaries():
    text = (
        "# Notes\n\n## Real\nbody\n```md\n## fake heading\n- fake bullet\n```\nafter\n"
        "~~~\n## also fake\n~~~\n## Second\nx\n"
    )
    doc = split_units(text)
    assert [u.heading for u in doc.units] == ["Real", "Second"]
    assert "## fake heading" in doc.units[0].text and "## also fake" in doc.units[0].text


def test_fence_closes_only_with_same_char_and_length():
    text = "- a\n````\n```\n- inside\n````\n- b\n"
    doc = split_units(text)
    assert [u.heading for u in doc.units] == ["a", "b"]
    assert doc.unclosed_fence_line is None


def test_unclosed_fence_is_reported():
    doc = split_units("## A\n```\n## B\n")
    assert doc.unclosed_fence_line == 2
    assert [u.heading for u in doc.units] == ["A"]


def test_serialize_roundtrip_and_removal():
    doc = split_units(SECTIONS)
    assert serialize(doc) == SECTIONS
    assert doc.text == SECTIONS
    without_first = serialize(doc, doc.units[1:])
    assert "Second" not in without_first and without_first.startswith("# Decisions")
    inserted = serialize(doc, [make_unit("## 2026-01-03 - Third\nDecision:\nUse C.\n\n"), *doc.units])
    assert split_units(inserted).units[0].heading == "2026-01-03 - Third"


def test_serialize_never_glues_units():
    doc = split_units("- a\n- b")  # no final newline
    assert serialize(doc, [doc.units[1], doc.units[0]]) == "- b\n- a\n"


def test_render_joins_stripped_parts_with_blank_line():
    doc = split_units("# T\n- a\n- b\n")
    assert render(doc, doc.units) == "# T\n\n- a\n\n- b"


def test_pack_fits_returns_whole_stripped_text():
    packed = pack("\n\n" + SECTIONS + "\n\n", 10_000)
    assert packed.text == SECTIONS.strip() and not packed.omitted and not packed.oversized


def test_pack_unbudgeted():
    text = "x " * 5000
    assert pack(text, None).text == text.strip()


def test_pack_omits_the_rest_at_first_misfit():
    budget = estimate_tokens("# Decisions\n\nEntries are newest first.\n\n## 2026-01-02 - Second\nDecision:\nUse B.")
    packed = pack(SECTIONS, budget)
    assert [u.heading for u in packed.chosen] == ["2026-01-02 - Second"]
    assert [u.heading for u in packed.omitted] == ["2026-01-01 - First"]
    assert not packed.oversized


def test_oversized_first_unit_is_kept_whole_and_reported():
    text = "# T\n\n## Huge\n" + "word " * 50 + "\n## Small\nx\n"
    packed = pack(text, 10)
    assert packed.oversized
    assert [u.heading for u in packed.chosen] == ["Huge"]
    assert [u.heading for u in packed.omitted] == ["Small"]
    assert packed.text.endswith("word")


WORDS = st.text(alphabet=st.sampled_from("abc xyz.,`#-\n"), max_size=40)


@st.composite
def documents(draw):
    kind = draw(st.sampled_from(["section", "bullet"]))
    n = draw(st.integers(min_value=1, max_value=8))
    parts = [draw(st.sampled_from(["", "# Title\n\nIntro text.\n\n"]))]
    for i in range(n):
        body = draw(WORDS).replace("\n-", "\n x").replace("\n#", "\n x").replace("`", "'")
        if kind == "section":
            parts.append(f"## Entry {i}\n{body}\n\n")
        else:
            parts.append(f"- item {i} {body}\n")
        if draw(st.booleans()):
            parts.append("```\n## fenced\n- fenced\n```\n")
    return "".join(parts)


@settings(max_examples=150, deadline=None)
@given(documents(), st.integers(min_value=1, max_value=120))
def test_packing_never_splits_a_unit_and_respects_the_budget(text, budget):
    doc = split_units(text.strip())
    packed = pack(text, budget)
    if packed.tokens <= budget and not packed.chosen and not packed.omitted:
        assert packed.text == text.strip()
        return
    # every chosen unit appears whole, in order; chosen + omitted == all units
    assert packed.chosen + packed.omitted == doc.units[: len(packed.chosen) + len(packed.omitted)]
    assert packed.chosen == doc.units[: len(packed.chosen)]
    for unit in packed.chosen:
        assert unit.text.strip() in packed.text
    assert len(packed.chosen) + len(packed.omitted) == len(doc.units)
    if packed.tokens > budget:
        # only a reported oversized first item may exceed the budget
        assert packed.oversized and len(packed.chosen) <= 1


@settings(max_examples=100, deadline=None)
@given(documents())
def test_split_is_lossless(text):
    doc = split_units(text)
    assert serialize(doc) == text


@settings(max_examples=150, deadline=None)
@given(st.text(alphabet=st.sampled_from("ab #-\n\r"), max_size=80), st.sampled_from(["## ", "- "]))
def test_fast_boundary_scan_equals_the_line_scan(text, marker):
    from memory_custodian.curated.parse.units import _boundaries, _lines

    lines = _lines(text)
    assert _boundaries(text, marker, None, None) == _boundaries(text, marker, [False] * len(lines), lines)


@settings(max_examples=100, deadline=None)
@given(documents())
def test_unit_line_numbers_match_the_source(text):
    doc = split_units(text)
    lines = doc.lines
    for unit in doc.units:
        assert "".join(lines[unit.start_line - 1: unit.end_line]) == unit.text


def reference_pack(text, budget):
    """MemoryCustodian 0.9.1's packing, written the slow obvious way (re-render and re-count each candidate)."""
    normalized = text.strip()
    if budget is None or estimate_tokens(normalized) <= budget:
        return normalized, 0, False
    doc = split_units(normalized)
    items = (["preamble"] if doc.preamble.strip() else []) + list(doc.units)

    def rendered(chosen):
        parts = [doc.preamble.strip() if i == "preamble" else i.text.strip() for i in chosen]
        return "\n\n".join(p for p in parts if p).strip()

    chosen, oversized, stop = [], False, len(items)
    for index, item in enumerate(items):
        if estimate_tokens(rendered(chosen + [item])) <= budget:
            chosen.append(item)
            continue
        first_semantic = item != "preamble" and not any(c != "preamble" for c in chosen)
        if not chosen or first_semantic:
            chosen.append(item)
            oversized, stop = True, index + 1
        else:
            stop = index
        break
    omitted = sum(1 for i in items[stop:] if i != "preamble")
    return rendered(chosen), omitted, oversized


@settings(max_examples=200, deadline=None)
@given(documents(), st.integers(min_value=1, max_value=150))
def test_incremental_packing_equals_the_reference(text, budget):
    packed = pack(text, budget)
    assert (packed.text, len(packed.omitted), packed.oversized) == reference_pack(text, budget)
