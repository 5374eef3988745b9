#!/usr/bin/env bash
# memory-custodian in one minute: init a memory folder in the bundled example project, record a
# decision and an area rule, then print the context pack an agent would get for a task.
# Runs on a throw-away copy, so the bundled example stays pristine. Any failing command stops it.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
if command -v memory-custodian >/dev/null 2>&1; then
  mc=(memory-custodian)
else
  mc=("${PYTHON:-python3}" -m memory_custodian)
fi
work="$(mktemp -d "${TMPDIR:-/tmp}/mc-demo.XXXXXX")"
trap 'status=$?; if [ $status -ne 0 ]; then echo "demo.sh: FAILED (exit $status) — see the command above; work dir: $work" >&2; fi' EXIT
cp -R "$here/kvstore" "$work/kvstore"
cd "$work/kvstore"
git init -q  # a project is a repository: init writes at its top level, where the agent starts

bold="" plain=""
if [ -t 1 ]; then bold=$'\033[1m' plain=$'\033[0m'; fi
# each command is echoed as you would type it, quotes included, so a copied line runs as it did here
shell_words() {
  local word out=()
  for word in "$@"; do
    if [[ $word =~ ^[A-Za-z0-9_./:=@%+,-]+$ ]]; then out+=("$word"); else out+=("'${word//\'/\'\\\'\'}'"); fi
  done
  printf '%s' "${out[*]}"
}
step() {
  printf '\n%s$ memory-custodian %s%s\n' "$bold" "$(shell_words "$@")" "$plain"
  "${mc[@]}" "$@"
}

step init
step add "Store data as an append-only JSON-lines journal replayed at start-up" --type decision \
  --reason "Crash-safe by construction and trivially inspectable; compaction can come later"
step enable areas/store --path 'src/store/**'
step add "Every put appends to the journal before it updates the in-memory dict" --type constraint --area store
step status
step read --task implementation --path src/store/engine.py --explain
echo
echo "demo.sh: OK — the project is in $work/kvstore"
