"""Extract the literal true- and false-positive samples of gitleaks' rule files into JSON data.

gitleaks (MIT) writes, next to each rule, the strings it must catch (`tps`) and must pass (`fps`).
This reads those string literals out of a local copy of its rules folder — Go string literals,
raw strings and concatenations of literals, in `[]string{…}` and `map[string]string{…}` slices,
`append(…)` calls and package-level string slices — and writes them as data. A sample built at
run time (`utils.GenerateSampleSecrets(…)`, `secrets.NewSecret(…)`, `fmt.Sprintf(…)`) is not a
literal: it is counted as skipped, never guessed. No Go code and no regular expression is copied.

    python benchmarks/secrets/extract_gitleaks.py PATH/TO/gitleaks/cmd/generate/config/rules \
        --license PATH/TO/gitleaks/LICENSE [--commits FILE] [--out benchmarks/secrets/gitleaks_samples.json]

`--commits` names the commit each file was read at (lines `FILE COMMIT`); without it the output
records only the folder.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import re
import sys

_TOKEN = re.compile(r"""
    (?P<ws>\s+) | (?P<comment>//[^\n]*|/\*.*?\*/) |
    (?P<raw>`[^`]*`) | (?P<str>"(?:\\.|[^"\\\n])*") | (?P<rune>'(?:\\.|[^'\\\n])+') |
    (?P<ident>[A-Za-z_][A-Za-z0-9_]*) | (?P<num>[0-9][0-9A-Za-z_.]*) |
    (?P<op>\.\.\.|:=|::=|[-+*/%&|^!<>=]=?|[(){}\[\],;:.])
    """, re.X | re.S)

_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", '"': '"', "'": "'", "a": "\a", "b": "\b",
            "f": "\f", "v": "\v"}
_TARGETS = {("tps",): "tps", ("fps",): "fps", ("r", ".", "TPs"): "tps", ("r", ".", "FPs"): "fps"}


def _tokens(source: str) -> list[tuple[str, str, bool]]:
    """(kind, text, whether a newline comes before it) for each token, comments dropped."""
    out, pos, newline = [], 0, False
    while pos < len(source):
        m = _TOKEN.match(source, pos)
        if m is None:
            raise ValueError(f"cannot read Go source at offset {pos}: {source[pos:pos + 20]!r}")
        pos = m.end()
        if m.lastgroup in ("ws", "comment"):
            newline = newline or "\n" in m.group()
            continue
        out.append((m.lastgroup, m.group(), newline))
        newline = False
    return out


def go_string(token: str) -> str:
    """The value of a Go string literal, raw (backquoted) or interpreted."""
    if token.startswith("`"):
        return token[1:-1].replace("\r", "")
    body, out, i = token[1:-1], [], 0
    while i < len(body):
        ch = body[i]
        if ch != "\\":
            out.append(ch)
            i += 1
            continue
        kind = body[i + 1]
        if kind in _ESCAPES:
            out.append(_ESCAPES[kind])
            i += 2
        elif kind in "xuU":
            width = {"x": 2, "u": 4, "U": 8}[kind]
            out.append(chr(int(body[i + 2:i + 2 + width], 16)))
            i += 2 + width
        else:
            out.append(chr(int(body[i + 1:i + 4], 8)))
            i += 4
    return "".join(out)


def _split_args(toks: list, start: int, close: str) -> tuple[list[list], int]:
    """The comma-separated items from `start` up to the bracket that closes at depth 0."""
    items, current, depth, i = [], [], 0, start
    while True:
        kind, text, _newline = toks[i]
        if text in "([{" and kind == "op":
            depth += 1
        elif text in ")]}" and kind == "op":
            if depth == 0:
                if current:
                    items.append(current)
                return items, i
            depth -= 1
        if text == "," and kind == "op" and depth == 0:
            items.append(current)
            current = []
        else:
            current.append(toks[i])
        i += 1


def _literal(item: list) -> str | None:
    """The string an item spells when it is only string literals joined by `+`."""
    if not item or len(item) % 2 == 0:
        return None
    for n, (kind, text, _newline) in enumerate(item):
        if n % 2 == 0 and kind not in ("str", "raw"):
            return None
        if n % 2 == 1 and text != "+":
            return None
    return "".join(go_string(tok[1]) for n, tok in enumerate(item) if n % 2 == 0)


class _Values:
    """Literal samples and the count of run-time ones an expression yields."""

    def __init__(self, texts=None, skipped=0):
        self.texts, self.skipped = list(texts or []), skipped

    def add(self, other: _Values) -> None:
        self.texts += other.texts
        self.skipped += other.skipped


def _element(item: list, slices: dict) -> _Values:
    text = _literal(item)
    if text is not None:
        return _Values([text])
    spread = item and item[-1][1] == "..."
    body = item[:-1] if spread else item
    if spread and len(body) == 1 and body[0][0] == "ident":
        name = body[0][1]
        return _Values(slices[name]) if name in slices else _Values()
    if spread or _is_literal_slice(body):
        return _expression(body, slices)
    return _Values(skipped=1)


def _is_literal_slice(item: list) -> bool:
    return [tok[1] for tok in item[:4]] in (["[", "]", "string", "{"], ["map", "[", "string", "]"])


def _expression(item: list, slices: dict) -> _Values:
    """Samples of a right-hand side: a slice or map literal, `append(…)`, a named slice, or a call."""
    texts = [tok[1] for tok in item]
    if texts[:4] == ["[", "]", "string", "{"]:
        elements, _end = _split_args(item, 4, "}")
        values = _Values()
        for element in elements:
            values.add(_element(element, slices))
        return values
    if texts[:6] == ["map", "[", "string", "]", "string", "{"]:
        pairs, _end = _split_args(item, 6, "}")
        values = _Values()
        for pair in pairs:
            colon = next(n for n, tok in enumerate(pair) if tok[1] == ":" and tok[0] == "op")
            values.add(_element(pair[colon + 1:], slices))
        return values
    if texts[:2] == ["append", "("]:
        args, _end = _split_args(item, 2, ")")
        values = _Values()
        first = args[0]
        if not (len(first) == 1 and first[0][1] in ("tps", "fps")):
            values.add(_element(first + [("op", "...", False)], slices) if len(first) == 1 else _expression(first, slices))
        for arg in args[1:]:
            values.add(_element(arg, slices))
        return values
    if len(item) == 1 and item[0][0] == "ident":
        return _Values(slices.get(item[0][1], []))
    return _Values(skipped=1)


def _statement_end(toks: list, start: int) -> int:
    """Index of the first token after the statement whose right-hand side starts at `start`: Go ends a
    statement at a newline outside brackets after an identifier, a literal or a closing bracket."""
    depth, i = 0, start
    while i < len(toks):
        kind, text, newline = toks[i]
        previous_kind, previous = toks[i - 1][0], toks[i - 1][1]
        if i > start and depth == 0 and newline and (previous_kind in ("ident", "str", "raw", "num", "rune")
                                                     or previous in (")", "]", "}")):
            return i
        if kind == "op" and text in "([{":
            depth += 1
        elif kind == "op" and text in ")]}":
            depth -= 1
            if depth < 0:
                return i
        i += 1
    return i


def _target_at(toks: list, i: int) -> tuple[str, int] | None:
    """("tps" or "fps", its token width) when an assignment to a sample slice starts at `i`."""
    if i > 0 and toks[i - 1][1] == ".":
        return None
    for target, which in _TARGETS.items():
        n = len(target)
        if tuple(tok[1] for tok in toks[i:i + n]) == target and i + n < len(toks) and toks[i + n][1] in (":=", "="):
            return which, n
    return None


def samples_of(source: str) -> tuple[dict[str, list[tuple[str, str]]], dict[str, int]]:
    """(`{"tps": [(rule, text)…], "fps": […]}`, skipped counts) for one Go rule file."""
    toks = _tokens(source)
    found = {"tps": [], "fps": []}
    skipped = {"tps": 0, "fps": 0}
    slices: dict[str, list[str]] = {}
    rule, depth, i = "", 0, 0
    while i < len(toks):
        kind, text, _newline = toks[i]
        if kind == "op" and text in "({[":
            depth += 1
        elif kind == "op" and text in ")}]":
            depth -= 1
        if text == "func" and kind == "ident":
            rule = ""
        if text == "RuleID" and toks[i + 1][1] == ":" and toks[i + 2][0] in ("str", "raw"):
            rule = go_string(toks[i + 2][1])
        if depth == 0 and text == "var" and toks[i + 1][0] == "ident" and toks[i + 2][1] == "=":
            end = _statement_end(toks, i + 3)
            slices[toks[i + 1][1]] = _expression(toks[i + 3:end], slices).texts
            i = end
            continue
        target = _target_at(toks, i)
        if target:
            which, width = target
            end = _statement_end(toks, i + width + 1)
            values = _expression(toks[i + width + 1:end], slices)
            found[which] += [(rule, t) for t in values.texts]
            skipped[which] += values.skipped
            i = end
            continue
        i += 1
    return found, skipped


def extract(rules_dir: str, commits: dict[str, str], license_text: str) -> dict:
    """The samples of every `*.go` rule file in `rules_dir` (tests and templates excluded), by file name."""
    data = {"tps": [], "fps": []}
    skipped = {"tps": 0, "fps": 0}
    names = sorted(n for n in os.listdir(rules_dir) if n.endswith(".go") and not n.endswith("_test.go"))
    for name in names:
        with open(os.path.join(rules_dir, name), encoding="utf-8") as f:
            found, counts = samples_of(f.read())
        for which in ("tps", "fps"):
            data[which] += [{"rule": rule, "file": name, "text": text} for rule, text in found[which]]
            skipped[which] += counts[which]
    source = {"repo": "gitleaks/gitleaks", "path": "cmd/generate/config/rules"}
    if commits:
        source["commits"] = {name: commits[name] for name in names if name in commits}
    return {"source": source, "license": license_text, "skipped_generated": skipped, **data}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("rules_dir")
    ap.add_argument("--license", required=True, help="gitleaks' LICENSE file")
    ap.add_argument("--commits", help="lines `FILE COMMIT`: the commit each rule file was read at")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "gitleaks_samples.json"))
    args = ap.parse_args(argv)
    commits = {}
    if args.commits:
        with open(args.commits, encoding="utf-8") as f:
            commits = dict(line.split() for line in f if line.strip())
    with open(args.license, encoding="utf-8") as f:
        license_text = f.read()
    data = extract(args.rules_dir, commits, license_text)
    for sample in data["tps"] + data["fps"]:  # stored encoded: a push-protected host would refuse them as text
        sample["text_base64"] = base64.b64encode(sample.pop("text").encode("utf-8")).decode("ascii")
    with open(args.out, "w", encoding="utf-8") as f:
        f.write(json.dumps(data, sort_keys=True, indent=1, ensure_ascii=False) + "\n")
    print(f"{len(data['tps'])} true-positive and {len(data['fps'])} false-positive literal samples; "
          f"skipped as generated at run time: {data['skipped_generated']}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
