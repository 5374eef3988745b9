"""The history pages in a real headless Chromium: each loads with no console message (a script or style the
policy blocked would be one), is screenshotted at 1280×800, and its refresh script connects its change stream.

Set MEMORY_CUSTODIAN_SCREENSHOTS=DIR to keep the screenshots (docs/screenshots/ are made so)."""

from __future__ import annotations

import os
import re
from concurrent.futures import ThreadPoolExecutor

import pytest
from history_project import IDENTITY, build_history
from test_web_browser import CHROMIUM, png_size, shoot
from web_project import fetch, running

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="headless browser test: Debian's chromium is not installed")


def test_every_history_page_loads_in_chromium_and_listens_for_changes(tmp_path, monkeypatch):
    for key, value in IDENTITY.items():
        monkeypatch.setenv(key, value)
    root = tmp_path / "project"
    root.mkdir()
    ids = build_history(root)
    out = os.environ.get("MEMORY_CUSTODIAN_SCREENSHOTS") or str(tmp_path / "shots")
    os.makedirs(out, exist_ok=True)
    with running(root) as server:
        session = re.search(r'href="/session/([^"]+)"', fetch(server, "/stats")[2]).group(1)
        shots = {"files": "files", "file": "file/decisions.md", "activity": "activity",
                 "activity-filtered": "activity?kind=decision", "search": "search?q=retry+backoff",
                 "session": f"session/{session}", "note-chain": f"note/{ids['new']}"}
        jobs = {name: (server.url + path, os.path.join(out, f"viewer-{name}.png"), str(tmp_path / f"profile-{name}"))
                for name, path in shots.items()}
        with ThreadPoolExecutor(max_workers=3) as pool:
            console = dict(zip(jobs, pool.map(lambda job: shoot(*job), jobs.values()), strict=True))
        opened = server.viewer.live.opened
    assert {name: lines for name, lines in console.items() if lines} == {}
    for name, (_, png, _) in jobs.items():
        assert png_size(png) == (1280, 800), name
    assert opened >= 1  # the refresh script ran under the policy and opened its stream
