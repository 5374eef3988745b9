"""gitleaks' own literal true- and false-positive samples (vendored as data in
`benchmarks/secrets/gitleaks_samples.json`, MIT), and the detector's figures on them.

Shared by `tests/test_gitleaks_samples.py` and `benchmarks/bench_secrets.py`. gitleaks' false
positives are per rule and deliberately near misses; one whose text is also a true positive (a
valid key of another rule) is counted apart, never as a false alarm.
"""

from __future__ import annotations

import base64
import json
import os

from memory_custodian.base.secrets import scan

SAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "benchmarks", "secrets",
                       "gitleaks_samples.json")

# True positives that are not a credential a memory note could hold, with why; they still count in
# the headline figure, and a second figure leaves them out.
NOT_CREDENTIALS = {
    ("messagebird-client-id", 'const MessageBirdClientID = "12345678-ABCD-ABCD-ABCD-1234567890AB"'):
        "a client ID names an application and grants nothing alone",
}


def load() -> dict:
    """The samples with their text decoded (stored base64: a host that scans pushes for credentials
    would refuse the repository with gitleaks' key-shaped samples in plain text)."""
    with open(SAMPLES, encoding="utf-8") as f:
        data = json.load(f)
    for sample in data["tps"] + data["fps"]:
        sample["text"] = base64.b64decode(sample.pop("text_base64")).decode("utf-8")
    return data


def figures(data: dict) -> dict:
    """Caught/total per gitleaks rule and overall, the misses, and the false alarms on the near misses."""
    per_rule: dict[str, list[int]] = {}
    missed, excluded_missed = [], []
    for sample in data["tps"]:
        counts = per_rule.setdefault(sample["rule"], [0, 0])
        counts[1] += 1
        if scan(sample["text"]):
            counts[0] += 1
        elif (sample["rule"], sample["text"]) in NOT_CREDENTIALS:
            excluded_missed.append(sample)
        else:
            missed.append(sample)
    tp_texts = {sample["text"] for sample in data["tps"]}
    near = [s for s in data["fps"] if s["text"] not in tp_texts]
    valid_elsewhere = [s for s in data["fps"] if s["text"] in tp_texts]
    total = len(data["tps"])
    excluded = sum(1 for s in data["tps"] if (s["rule"], s["text"]) in NOT_CREDENTIALS)
    return {"per_rule": per_rule, "total": total, "caught": total - len(missed) - len(excluded_missed),
            "missed": missed, "excluded": excluded, "excluded_missed": excluded_missed,
            "near": len(near), "alarms": [s for s in near if scan(s["text"])],
            "valid_elsewhere": len(valid_elsewhere),
            "valid_elsewhere_caught": sum(1 for s in valid_elsewhere if scan(s["text"])),
            "skipped": data["skipped_generated"]}
