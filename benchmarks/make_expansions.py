"""Generate the query-expansion table (`ledger/recall/data/expansions.tsv`) from Princeton WordNet 3.0.

The table is general English (WordNet's words and relations only, never a truth set's): for each
common single word (one with a sense tagged in WordNet's sense-tagged corpus), the common
words of its most frequent senses' synsets, their derivations, the synsets one step up (hypernyms)
and up to HYPONYM_DEPTH steps down (hyponyms), closest first, at most PER_WORD of them (single words only). Two-word
entries (`emergency room`) are keyed by both words joined with `_`.

    apt-get download wordnet-base && dpkg -x wordnet-base_*.deb /tmp/wn
    .venv/bin/python benchmarks/make_expansions.py /tmp/wn/usr/share/wordnet

Reruns over the same WordNet are byte-identical.
"""

from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "src", "memory_custodian", "ledger", "recall", "data", "expansions.tsv")
POS = {"n": "noun", "v": "verb", "a": "adj", "r": "adv"}
SENSES = 3  # a word's most frequent senses whose neighbours it expands to
PER_WORD = 40
HYPONYM_DEPTH = 3
MIN_TAGGED = 1  # a word is common when at least this many of its senses are tagged in WordNet's corpus


def _records(folder, kind):
    """(pos, line) for each record of WordNet's `kind` files (index or data), its licence header skipped."""
    for pos, name in POS.items():
        with open(os.path.join(folder, f"{kind}.{name}"), encoding="latin-1") as f:
            for line in f:
                if not line.startswith(" "):
                    yield pos, line


def read_index(folder):
    """{(lemma, pos): (tagged sense count, [synset offsets in frequency order])}."""
    out = {}
    for pos, line in _records(folder, "index"):
        p = line.split()
        lemma, n_syn, n_ptr = p[0], int(p[2]), int(p[3])
        tagged = int(p[5 + n_ptr])
        out[(lemma, pos)] = (tagged, p[6 + n_ptr:6 + n_ptr + n_syn])
    return out


def read_data(folder):
    """{(offset, pos): (lemmas, [(symbol, offset, pos)])}; adjective satellites are `a`."""
    out = {}
    for pos, line in _records(folder, "data"):
        p = line.split(" | ")[0].split()
        n_words = int(p[3], 16)
        lemmas = [p[4 + 2 * i].lower() for i in range(n_words)]
        at = 4 + 2 * n_words
        n_ptr = int(p[at])
        ptrs = [(p[at + 1 + 4 * i], p[at + 2 + 4 * i], p[at + 3 + 4 * i].replace("s", "a")) for i in range(n_ptr)]
        out[(p[0], pos)] = (lemmas, ptrs)
    return out


def neighbours(data, key, depth):
    """The synsets one step up and derivations of `key`, and its hyponyms `depth` steps down."""
    _lemmas, ptrs = data[key]
    found = [key]
    down = [key]
    for sym, off, pos in ptrs:
        if sym in ("@", "@i", "+"):
            found.append((off, pos))
    for _ in range(depth):
        nxt = []
        for k in down:
            nxt.extend((off, pos) for sym, off, pos in data[k][1] if sym in ("~", "~i"))
        found.extend(nxt)
        down = nxt
    return found


def build(folder) -> list[str]:
    index, data = read_index(folder), read_data(folder)
    common = {}
    for (lemma, _pos), (tagged, _) in index.items():
        common[lemma] = common.get(lemma, 0) + tagged
    rows = []
    for word in sorted({lemma for lemma, _ in index}):
        if common.get(word, 0) < MIN_TAGGED or not word.replace("_", "").isalpha() or word.count("_") > 1:
            continue
        ranked: dict[str, int] = {}
        for pos in POS:
            entry = index.get((word, pos))
            if not entry:
                continue
            for rank, off in enumerate(entry[1][:SENSES]):
                for hop, syn in enumerate(neighbours(data, (off, pos), HYPONYM_DEPTH)):
                    for lemma in data[syn][0]:
                        lemma = lemma.split("(")[0]
                        if lemma == word or not common.get(lemma) or not lemma.replace("_", "").isalpha():
                            continue
                        if "_" not in lemma and len(lemma) > 2:
                            ranked.setdefault(lemma, rank * 1000 + hop)
        best = sorted(ranked, key=lambda w: (ranked[w], -common.get(w, 0), w))[:PER_WORD]
        if best:
            rows.append(word + "\t" + " ".join(best))
    return rows


def main(argv) -> int:
    if len(argv) != 2:
        print("usage: make_expansions.py WORDNET_DICT_FOLDER", file=sys.stderr)
        return 2
    rows = build(argv[1])
    with open(OUT, "wb") as f:  # plain text: mapped, not decompressed, by a fresh recall; reruns are byte-identical
        f.write(("\n".join(rows) + "\n").encode("utf-8"))
    print(f"{len(rows)} words, {os.path.getsize(OUT)} bytes -> {os.path.relpath(OUT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
