"""Every viewer page in a real headless Chromium: it loads with no console message (a blocked script,
style or resource is one) and is screenshotted at 1280×800.

Set MEMORY_CUSTODIAN_SCREENSHOTS=DIR to keep the screenshots (the README's are made so)."""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
from concurrent.futures import ThreadPoolExecutor

import pytest
from web_project import build_project, running

CHROMIUM = shutil.which("chromium")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="headless browser test: Debian's chromium is not "
                                "installed (apt-get install -y chromium; .ci/run installs it)")
# the flags a closed network needs: no background fetches, no first-run work, no sandbox as root
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync", "--hide-scrollbars",
         "--window-size=1280,800", "--enable-logging=stderr", "--v=0")


def shoot(url: str, png: str, profile: str) -> list[str]:
    """Load `url`, write its screenshot to `png`; the console lines Chromium logged."""
    proc = subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={profile}", f"--screenshot={png}", url],
                          capture_output=True, text=True, timeout=90)
    assert os.path.exists(png), proc.stderr[-3000:]
    return [line for line in proc.stderr.splitlines() if ":CONSOLE" in line]


def png_size(path: str) -> tuple[int, int]:
    with open(path, "rb") as f:
        head = f.read(24)
    assert head[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", head[16:24])


def test_every_page_loads_in_chromium_without_a_console_message(tmp_path):
    root = tmp_path / "project"
    root.mkdir()
    ids = build_project(root)
    out = os.environ.get("MEMORY_CUSTODIAN_SCREENSHOTS") or str(tmp_path / "shots")
    os.makedirs(out, exist_ok=True)
    shots = {"pack": "pack?task=implementation&path=src/daemon/worker.py&q=lock+restart", "ledger": "ledger",
             "ledger-search": "ledger?q=retry+backoff&state=", "note": f"note/{ids['old']}", "eval": "eval",
             "doctor": "doctor", "stats": "stats"}
    with running(root, truth=ids["truth"]) as server:
        jobs = {name: (server.url + path, os.path.join(out, f"viewer-{name}.png"), str(tmp_path / f"profile-{name}"))
                for name, path in shots.items()}
        # the check can fail: a page that logs to the console, loaded beside the others
        jobs["self-check"] = ("data:text/html,<p>x</p><script>console.error('seen')</script>",
                              str(tmp_path / "self-check.png"), str(tmp_path / "profile-self-check"))
        with ThreadPoolExecutor(max_workers=4) as pool:
            console = dict(zip(jobs, pool.map(lambda job: shoot(*job), jobs.values())))
    assert any("seen" in line for line in console.pop("self-check"))
    assert {name: lines for name, lines in console.items() if lines} == {}
    for name, (_, png, _) in jobs.items():
        assert png_size(png) == (1280, 800), name
