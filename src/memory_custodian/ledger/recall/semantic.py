"""The optional semantic channel: what a note means, for questions that share no word with it.

Static word embeddings from `wordllama` (MIT; its 256-dimension model ships inside the wheel, so
nothing is downloaded, ever): a note's vector is the pooled embedding of its text, computed once
per note text and kept in the index (`.cache/index.sqlite`, table `note_vectors`, keyed by note id
and a digest of model and text), so a recall embeds only its query. Installed with
`pip install 'memory-custodian[semantic]'`, used whenever it is importable (MEMORY_CUSTODIAN_SEMANTIC=0
turns it off), never required. Loading the model costs ~0.7 s, past a hook's budget: only `recall`
(CLI, MCP server, `eval`) uses it, never the hooks or the context pack (`recall.SEMANTIC_ACCOUNTING`).
"""

from __future__ import annotations

import os

MODEL = "wordllama-l2_supercat-256"
ENV = "MEMORY_CUSTODIAN_SEMANTIC"
MIN_COSINE = 0.25  # a note below this similarity is not a semantic match (tuned on train)
EMBED_BATCH = 512

_state: dict = {"installed": None, "encoder": None}
_matrices: dict = {}  # index path -> (signature, note ids, matrix)


def installed() -> bool:
    """Whether the extra is installed (found without importing it: a recall that does not use it pays nothing)."""
    if _state["installed"] is None:
        _state["installed"] = _on_path("wordllama") and _on_path("numpy")
    return _state["installed"]


def _on_path(package: str) -> bool:
    """Whether `package` is installed where this interpreter imports from: its folder, or its
    dist-info (an editable install). Listing sys.path costs a fresh recall ~0.1 ms; importlib.util, 1.4."""
    import sys

    prefix = package + "-"
    for folder in sys.path:
        try:
            names = os.listdir(folder or ".")
        except OSError:  # a zip, a folder gone
            continue
        if package in names or any(n.startswith(prefix) and n.endswith(".dist-info") for n in names):
            return True
    return False


def enabled() -> bool:
    return os.environ.get(ENV, "1") != "0" and installed()


def encoder():
    """The model, loaded once a process from the files inside the wheel (downloads disabled)."""
    if _state["encoder"] is None:
        import wordllama
        from wordllama import WordLlama

        # the package's own folder holds weights/ and tokenizers/: point its cache there
        _state["encoder"] = WordLlama.load(cache_dir=os.path.dirname(wordllama.__file__), disable_download=True)
    return _state["encoder"]


def note_text(title: str, body: str, tags_text: str, paths_text: str) -> str:
    return "\n".join(t for t in (title, body, tags_text, paths_text) if t)


def digest(text: str) -> str:
    import hashlib  # only where vectors are synced: OpenSSL's load is a fresh `recall`'s cost

    return hashlib.sha256(f"{MODEL}\0{text}".encode()).hexdigest()[:20]


def embed(texts: list[str]):
    """Unit vectors (float32, one row a text)."""
    import numpy

    if not texts:
        return numpy.zeros((0, 256), dtype=numpy.float32)
    parts = [encoder().embed(texts[i:i + EMBED_BATCH], norm=True) for i in range(0, len(texts), EMBED_BATCH)]
    return numpy.ascontiguousarray(numpy.vstack(parts), dtype=numpy.float32)


def sync(db) -> dict:
    """Bring `note_vectors` up to the notes the index holds: embed the new or changed texts, drop
    the vectors of notes gone or forgotten. Returns {"embedded": n, "dropped": n}."""
    rows = db.execute("SELECT n.id, t.title, t.body, t.tags_text, t.paths_text FROM notes n "
                      "JOIN note_text t ON t.rowid = n.rowid WHERE n.state != 'forgotten'").fetchall()
    stored = dict(db.execute("SELECT note, digest FROM note_vectors"))
    texts = {r[0]: note_text(*r[1:]) for r in rows}
    want = {note_id: digest(text) for note_id, text in texts.items()}
    todo = sorted(n for n, d in want.items() if stored.get(n) != d)
    gone = sorted(set(stored) - set(want))
    if not todo and not gone:
        return {"embedded": 0, "dropped": 0}
    vectors = embed([texts[n] for n in todo])
    db.execute("BEGIN IMMEDIATE")
    try:
        db.executemany("DELETE FROM note_vectors WHERE note = ?", [(n,) for n in gone])
        db.executemany("INSERT OR REPLACE INTO note_vectors(note, digest, vec) VALUES (?, ?, ?)",
                       [(n, want[n], vectors[i].tobytes()) for i, n in enumerate(todo)])
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise
    return {"embedded": len(todo), "dropped": len(gone)}


def matrix(index):
    """(note ids, their vectors as one matrix), synced and kept in memory while the index is unchanged."""
    import numpy

    db = index.db
    sig = (db.execute("PRAGMA data_version").fetchone()[0], db.total_changes)
    kept = _matrices.get(index.path)
    if kept is not None and kept[0] == sig:
        return kept[1], kept[2]
    sync(db)
    rows = db.execute("SELECT note, vec FROM note_vectors ORDER BY note").fetchall()
    ids = [r[0] for r in rows]
    mat = numpy.frombuffer(b"".join(r[1] for r in rows), dtype=numpy.float32).reshape(len(rows), -1) \
        if rows else numpy.zeros((0, 256), dtype=numpy.float32)
    _matrices[index.path] = ((db.execute("PRAGMA data_version").fetchone()[0], db.total_changes), ids, mat)
    return ids, mat


def ranked(index, query: str, keep, depth: int) -> list[str]:
    """The `depth` most similar notes at or above MIN_COSINE that `keep(ids)` (the caller's filters,
    given a batch of ids, returns those that pass) lets through, most similar first (ties by id)."""
    import numpy

    ids, mat = matrix(index)
    if not ids:
        return []
    sims = mat @ embed([query])[0]
    above = numpy.nonzero(sims >= MIN_COSINE)[0]
    # a stable sort of the ids' order (ids are sorted) by similarity, highest first: ties by id
    order = [ids[i] for i in above[numpy.argsort(-sims[above], kind="stable")].tolist()]
    out: list[str] = []
    start, batch = 0, 2 * depth
    while start < len(order) and len(out) < depth:
        chunk = order[start:start + batch]
        passed = keep(chunk)
        out.extend(n for n in chunk if n in passed)
        start, batch = start + batch, batch * 4  # filters that keep few: wider batches
    return out[:depth]
