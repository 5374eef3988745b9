"""textsafe: stored text printed on a terminal never carries a control sequence."""

from __future__ import annotations

import json
import re

from hypothesis import given, settings
from hypothesis import strategies as st

from memory_custodian.base.textsafe import json_safe, printable

UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def test_controls_become_visible_escapes():
    assert printable("evil \x1b[2J\x1b]0;owned\x07 \x9b31m") == "evil \\x1b[2J\\x1b]0;owned\\x07 \\x9b31m"
    assert printable("a\rb\x00c\x7f") == "a\\x0db\\x00c\\x7f"
    assert printable("abc \u202edcba") == "abc \\u202edcba"


def test_ordinary_text_passes_untouched():
    text = "line one\n\tindented · café 日本語 🙂 e\u0301 \u00a0"
    assert printable(text) == text
    assert printable("a\u200db") == "a\\u200db"  # a zero-width joiner is invisible: shown, by choice


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_nothing_unsafe_survives(text):
    out = printable(text)
    assert not UNSAFE.search(out)
    assert out.count("\n") == text.count("\n") and out.count("\t") == text.count("\t")


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_json_safe_keeps_the_value(text):
    doc = json.dumps({"t": text}, ensure_ascii=False)
    safe = json_safe(doc)
    assert json.loads(safe) == {"t": text}
    assert not UNSAFE.search(safe)


def test_exactly_the_documented_characters_are_escaped():
    """The fast search class is written as ranges: it must match the escape table code point for code point."""
    from memory_custodian.base.textsafe import INVISIBLE, printable

    bidi = {*range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x200E, 0x200F, 0x061C, 0x2028, 0x2029}
    unsafe = {c for c in range(0x20) if c not in (0x0A, 0x09)} | set(range(0x7F, 0xA0)) | bidi | INVISIBLE
    for c in [*range(0x3200), *range(0xFE00, 0x10000), *range(0xE0000, 0xE0200)]:
        assert (printable(f"a{chr(c)}b") != f"a{chr(c)}b") == (c in unsafe), hex(c)
