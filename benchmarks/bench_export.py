"""Export mirror and edit round-trip cost at 749, 7,490 and 74,900 notes.

For each size a corpus is generated with `make_corpus.py` (deterministic), then measured in
process (median of `--repeat` runs): the full `export` (read + render + write), its two parts
(reading the notes from the index, rendering them), `export --check`, the file size,
`edit --checkout` and an unchanged `--checkin`; and `export` as a fresh CLI process (once).
Target: export <= 3 s at 74,900 notes, near-linear growth.

    .venv/bin/python benchmarks/bench_export.py [--sizes 749,7490,74900] [--repeat 3] [--json out.json]
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "src"))

from make_corpus import generate  # noqa: E402

from memory_custodian.ledger.text.export import render_rows  # noqa: E402
from memory_custodian.ledger.text.text_api import _export_rows, _no_cyclic_gc  # noqa: E402
from memory_custodian.memory import Memory  # noqa: E402


def timed(fn, repeat):
    """Median wall and CPU seconds over `repeat` runs (CPU time shows the cost on a shared machine)."""
    walls, cpus, out = [], [], None
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        out = fn()
        walls.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
    return statistics.median(walls), statistics.median(cpus), out


def measure(size: int, repeat: int, work: Path) -> dict:
    root = work / f"n{size}"
    generate(root, size)
    memory = Memory.open(root)
    mirror = memory.memory_dir / "MEMORY.md"
    index_file = memory.memory_dir / ".cache" / "index.sqlite"

    def full_export():
        mirror.unlink(missing_ok=True)
        return memory.export()

    assert not index_file.exists()
    w_replay, c_replay, result = timed(full_export, repeat)  # a fresh clone: no index, full replay
    assert not index_file.exists()
    replayed = mirror.read_bytes()
    t0 = time.perf_counter()
    memory.reindex()
    t_reindex = time.perf_counter() - t0
    w_export, c_export, _ = timed(full_export, repeat)  # the usual case: the index is current
    assert mirror.read_bytes() == replayed
    # the export's two parts, each as the export runs it (cyclic GC paused, the rows freed inside the
    # pause): reading the rows from the index, and rendering them
    notes = memory._ledger_notes()
    with _no_cyclic_gc():
        w_read, c_read, rows = timed(functools.partial(_export_rows, notes), repeat)
        w_render, c_render, _ = timed(functools.partial(render_rows, rows), repeat)
        del rows
    w_check, c_check, check = timed(lambda: memory.export(check=True), repeat)
    assert check.up_to_date
    buf = work / f"buf{size}.md"
    w_checkout, _, co = timed(lambda: memory.edit_checkout(buf), repeat)
    w_checkin, _, ci = timed(lambda: memory.edit_checkin(buf), repeat)
    assert ci.events == 0
    mirror.unlink()
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "memory_custodian", "export", "--project-root", str(root)], check=True,
                   capture_output=True)
    t_cli = time.perf_counter() - t0
    shutil.rmtree(root, ignore_errors=True)
    return {"notes": size, "exported_notes": result.notes, "bytes": result.bytes,
            "export_s": w_export, "export_cpu_s": c_export, "export_replay_s": w_replay,
            "export_replay_cpu_s": c_replay, "read_s": w_read, "read_cpu_s": c_read,
            "render_s": w_render, "render_cpu_s": c_render,
            "check_s": w_check, "check_cpu_s": c_check, "cli_export_s": t_cli, "reindex_s": t_reindex,
            "checkout_s": w_checkout, "checkout_notes": co.notes, "checkin_unchanged_s": w_checkin}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="749,7490,74900")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for size in (int(s) for s in args.sizes.split(",")):
            rows.append(measure(size, args.repeat, Path(tmp)))
            r = rows[-1]
            print(f"{r['notes']:>6} notes: export {r['export_s']:.2f}s wall / {r['export_cpu_s']:.2f}s CPU "
                  f"(no index: {r['export_replay_s']:.2f}s / {r['export_replay_cpu_s']:.2f}s), read "
                  f"{r['read_cpu_s']:.2f}s CPU, render {r['render_cpu_s']:.2f}s CPU, {r['bytes'] / 1e6:.2f} MB", flush=True)
    print("\n| notes | export, index current (s wall / CPU) | export, no index (s wall / CPU) | read only (s CPU) "
          "| render only (s CPU) | --check (s wall) | CLI export (s wall) | size (MB) | µs CPU per note | checkout (s) "
          "| unchanged checkin (s) |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['notes']:,} | {r['export_s']:.2f} / {r['export_cpu_s']:.2f} | {r['export_replay_s']:.2f} / "
              f"{r['export_replay_cpu_s']:.2f} | {r['read_cpu_s']:.2f} | {r['render_cpu_s']:.2f} | {r['check_s']:.2f} | "
              f"{r['cli_export_s']:.2f} | {r['bytes'] / 1e6:.2f} | {r['export_cpu_s'] / r['notes'] * 1e6:.0f} | "
              f"{r['checkout_s']:.2f} | {r['checkin_unchanged_s']:.2f} |")
    first, last = rows[0], rows[-1]
    scale = last["notes"] / first["notes"]
    print(f"\nexport CPU grows {last['export_cpu_s'] / first['export_cpu_s']:.0f}x for {scale:.0f}x the notes "
          f"(per-note cost ratio {last['export_cpu_s'] / first['export_cpu_s'] / scale:.2f}; 1.00 = linear); "
          f"load average now {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
