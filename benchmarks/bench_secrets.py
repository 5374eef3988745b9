"""The secret detector's figures: caught/total per kind and false alarms/total, and its cost.

Corpora: gitleaks' own literal samples (`benchmarks/secrets/gitleaks_samples.json`, MIT: 257 true
positives over 62 rules and 334 false positives, the samples gitleaks generates at run time — 295
and 29 expressions — being skipped, see `benchmarks/secrets/README.md`); a generated corpus of every
kind the detector knows (`tests/secret_samples.py`, each credential in three settings: alone, in a
sentence, in an indented config line) with the older corpus of `tests/test_attacks_secrets.py`;
and ordinary engineering text of both. gitleaks' false positives are deliberately near misses
(placeholders, documentation examples, lookalikes), so they are reported apart from ordinary text.
Cost: the time a prompt hook pays to scan a typical message, and the import and first scan in a
fresh process; `--baseline SRC` measures another tree's `src` (an older detector) interleaved
with this one and prints the ratios.

    python benchmarks/bench_secrets.py [--per-kind 30] [--baseline /path/to/old/src]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))

import gitleaks_samples  # noqa: E402
import secret_samples  # noqa: E402
from test_attacks_secrets import CLEAN_CORPUS, secrets_corpus  # noqa: E402

from memory_custodian.base.secrets import scan  # noqa: E402

MESSAGES = {
    "prose prompt": "please fix the flaky test in tests/test_store.py; the lock is released before the rename " * 3,
    "config prompt": "Set API_URL=https://api.acme.dev and LOG_LEVEL=info; the header is Authorization: Bearer "
                     "<token>.\nkind: ConfigMap\ndata:\n  retries: 3\n" * 2,
}

# One process times a warm scan (median of 200) and, first, its own import + first scan.
_PROBE = """
import json, statistics, sys, time
t = time.perf_counter()
from memory_custodian.base.secrets import scan
scan('deploy the refund webhook after the lock is released; see docs/ops.md')
cold = (time.perf_counter() - t) * 1000
warm = {}
for name, message in json.loads(sys.argv[1]).items():
    times = []
    for _ in range(200):
        t = time.perf_counter()
        scan(message)
        times.append((time.perf_counter() - t) * 1e6)
    warm[name] = statistics.median(times)
print(json.dumps({"cold_ms": cold, "warm_us": warm}))
"""


def figures(pairs: list[tuple[str, str]], clean: list[str]) -> dict:
    per_kind: dict[str, list[int]] = {}
    for kind, text in pairs:
        caught = per_kind.setdefault(kind, [0, 0])
        caught[1] += 1
        caught[0] += bool(scan(text))
    alarms = [t for t in clean if scan(t)]
    return {"per_kind": per_kind, "caught": sum(c for c, _ in per_kind.values()),
            "total": sum(t for _, t in per_kind.values()), "alarms": alarms, "clean": len(clean)}


def pct(part: int, whole: int) -> str:
    return f"{part}/{whole} ({100 * part / whole:.2f}%)"


def print_gitleaks() -> None:
    g = gitleaks_samples.figures(gitleaks_samples.load())
    print(f"{'gitleaks rule':<44} caught/total")
    for rule, (caught, total) in sorted(g["per_rule"].items()):
        print(f"{rule:<44} {caught}/{total}" + ("" if caught == total else "   <-- missed"))
    print(f"\ngitleaks true positives caught: {pct(g['caught'], g['total'])} over {len(g['per_rule'])} rules "
          f"(skipped as generated at run time: {g['skipped']['tps']} expressions)")
    kept = g["total"] - g["excluded"]
    print(f"  leaving out {g['excluded']} that are not credentials "
          f"({'; '.join(gitleaks_samples.NOT_CREDENTIALS.values())}): {pct(g['caught'], kept)}")
    for sample in g["missed"] + g["excluded_missed"]:
        print(f"  missed {sample['rule']}: {sample['text'][:70]!r}")
    print(f"gitleaks false positives (near misses) alarmed: {pct(len(g['alarms']), g['near'])}")
    for sample in g["alarms"]:
        print(f"  false alarm {sample['rule']}: {sample['text'][:70]!r}")
    print(f"  and {g['valid_elsewhere']} false positives of one rule that are another rule's true positive "
          f"(valid credentials): {g['valid_elsewhere_caught']} flagged")


def print_generated(per_kind: int) -> None:
    clean = secret_samples.negatives() + [t for t in CLEAN_CORPUS if t not in secret_samples.negatives()]
    pairs = secret_samples.positives(seed=4242, per_kind=per_kind) + secrets_corpus(seed=4242, per_kind=per_kind)
    result = figures(pairs, clean)
    print(f"\n{'generated kind':<44} caught/total")
    for kind, (caught, total) in sorted(result["per_kind"].items()):
        print(f"{kind:<44} {caught}/{total}" + ("" if caught == total else "   <-- missed"))
    print(f"\nkinds: {len(result['per_kind'])}")
    print(f"generated corpus caught: {pct(result['caught'], result['total'])}")
    print(f"false alarms on ordinary engineering text: {pct(len(result['alarms']), result['clean'])}")
    for text in result["alarms"]:
        print(f"  false alarm: {text[:70]!r}")


# Ordinary text full of `$` (shell, CI, PHP, Makefiles, prices): none of it may alarm.
DOLLAR_CLEAN = [
    "export PATH=$PATH:$HOME/.local/bin", "password=$DB_PASSWORD", "DB_PASS=${DB_PASS:-}", "password: $password",
    "token=$(vault read -field=token secret/ci)", "secret=${{ secrets.DEPLOY_KEY }}", "PASSWORD=$HOME/.pgpass",
    "$pdo = new PDO($dsn, $user, $password);", "the plan costs $25 a seat, $250 a year; pass it to billing",
    "CFLAGS += $(shell pkg-config --cflags openssl)", "echo \"$1 $2\" >> $LOG_FILE", "price: $19.99 (was $24.99)",
    "api_key = os.environ['API_KEY']  # never $API_KEY inline", "my $secret = $ENV{'APP_SECRET'};",
    "db_pass: $db_pass", "client_secret: ${CLIENT_SECRET}", "sed -i 's/$OLD/$NEW/g' config.ini",
    "the regex ^\\$[0-9]+$ matches a price", "PGPASSWORD=$PGPASSWORD psql -h db", "awk '{print $3}' access.log",
]
# Credentials holding `$`, `!` and `#`, each in three settings.
DOLLAR_SECRETS = ["DB_PASS=p$ssw0rd!Xy7", "password=$ecretPa55w0rd", "SECRET_KEY=7h$k2!m9#qz4@w8e^r5t0y3u",
                  "db_password: Tr0ub4dor$3!x", "MYSQL_ROOT_PASSWORD=h$Kd9!qW2#", "passwd=a1$B2c3!D4"]


def print_dollar() -> None:
    caught = sum(bool(scan(form.format(s))) for s in DOLLAR_SECRETS for form in ("{}", "Deploy with {} now", "  {}\n"))
    alarms = [t for t in DOLLAR_CLEAN if scan(t)]
    print(f"\ncredentials with a `$` caught: {pct(caught, 3 * len(DOLLAR_SECRETS))}")
    print(f"false alarms on ordinary text with `$` (shell, CI, PHP, prices): {pct(len(alarms), len(DOLLAR_CLEAN))}")
    for text in alarms:
        print(f"  false alarm: {text[:70]!r}")


def probe(src: str) -> dict:
    env = dict(os.environ, PYTHONPATH=src)
    out = subprocess.run([sys.executable, "-c", _PROBE, json.dumps(MESSAGES)], capture_output=True, text=True,
                         check=True, env=env).stdout
    return json.loads(out)


def print_cost(runs: int, baseline: str | None) -> None:
    trees = {"this tree": str(REPO / "src")} | ({"baseline": baseline} if baseline else {})
    for src in trees.values():  # both trees start from bytecode, whatever PYTHONDONTWRITEBYTECODE says
        subprocess.run([sys.executable, "-m", "compileall", "-q", src], check=True, capture_output=True)
    samples: dict[str, list[dict]] = {name: [] for name in trees}
    for _ in range(runs):  # interleaved, so machine load falls on both alike
        for name, src in trees.items():
            samples[name].append(probe(src))
    print()
    for name, got in samples.items():
        cold = [s["cold_ms"] for s in got]
        warm = {m: statistics.median(s["warm_us"][m] for s in got) for m in MESSAGES}
        print(f"{name}: fresh process, import + first scan: median {statistics.median(cold):.2f} ms "
              f"(min {min(cold):.2f}); warm scan: " + ", ".join(f"{m} {v:.0f} µs" for m, v in warm.items()))
    if baseline:
        def ratio(pick) -> float:
            return statistics.median(map(pick, samples["this tree"])) / statistics.median(map(pick, samples["baseline"]))

        print(f"ratio this/baseline: import + first scan {ratio(lambda s: s['cold_ms']):.2f}; "
              + ", ".join(f"{m} {ratio(lambda s, m=m: s['warm_us'][m]):.2f}" for m in MESSAGES))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--per-kind", type=int, default=30)
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--baseline", help="the src folder of another checkout, measured interleaved with this one")
    args = ap.parse_args()
    print_gitleaks()
    print_generated(args.per_kind)
    print_dollar()
    print_cost(args.runs, args.baseline)


if __name__ == "__main__":
    main()
