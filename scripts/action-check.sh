#!/usr/bin/env bash
# The GitHub Action's check step. Inputs arrive only as SG_* environment variables (never interpolated
# into this script); outputs go to $GITHUB_OUTPUT, the markdown summary to $GITHUB_STEP_SUMMARY.
set -uo pipefail

# Words separated by spaces or newlines; read never evaluates them (no expansion, no globbing).
read -r -d '' -a paths <<< "${SG_PATHS:-.}" || true
[ "${#paths[@]}" -gt 0 ] || paths=(.)
common=()
[ -n "${SG_CONFIG:-}" ] && common+=(--config "$SG_CONFIG")
[ -n "${SG_BASELINE:-}" ] && common+=(--baseline "$SG_BASELINE")
# The organisation's other members of this repository's groups: the map a scheduled audit wrote.
[ -n "${SG_ORG_MAP:-}" ] && common+=(--org-map "$SG_ORG_MAP")
if [ -n "${SG_POLICIES:-}" ]; then
  read -r -d '' -a dirs <<< "$SG_POLICIES" || true
  for d in "${dirs[@]}"; do common+=(--policies "$d"); done
fi
# The change since the base revision (SG6xx): the input, else the pull request's base commit from the
# event payload (read as JSON, never evaluated); "none" turns it off. The commit must be in the clone.
base="${SG_BASE:-}"
if [ -z "$base" ] && [ -n "${GITHUB_EVENT_PATH:-}" ] && [ -f "$GITHUB_EVENT_PATH" ]; then
  base=$(python3 - "$GITHUB_EVENT_PATH" <<'PY'
import json, re, sys
try:
    event = json.load(open(sys.argv[1], encoding="utf-8"))
except (OSError, ValueError):
    raise SystemExit
def get(node, *keys):
    for key in keys:
        node = node.get(key) if isinstance(node, dict) else None
    return node
sha = get(event, "pull_request", "base", "sha") or get(event, "merge_group", "base_sha") or ""
print(sha if isinstance(sha, str) and re.fullmatch(r"[0-9a-f]{40}|[0-9a-f]{64}", sha) else "")
PY
  )
fi
[ "$base" = "none" ] && base=""
[ -n "$base" ] && common+=(--base "$base")
sarif="${SG_SARIF:-subguard.sarif}"
summary_md=$(mktemp)
counts_json=$(mktemp)

# One scan renders every report: annotations on stdout, SARIF, markdown and JSON to files.
subguard check "${paths[@]}" "${common[@]}" --fail-on "${SG_FAIL_ON:-error}" --format github \
  --also "sarif=$sarif" --also "markdown=$summary_md" --also "json=$counts_json"
code=$?

if [ -n "${GITHUB_STEP_SUMMARY:-}" ] && [ -s "$summary_md" ]; then
  cat "$summary_md" >> "$GITHUB_STEP_SUMMARY"
fi
# The suggested fixes (safe and unsafe) as a diff in the summary; nothing is changed in the workspace.
if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
  fixes=$(subguard check "${paths[@]}" "${common[@]}" --no-simulate --diff --unsafe-fixes 2>/dev/null)
  if [ -n "$fixes" ]; then
    printf '\n### Suggested fixes\n\n`subguard check --fix` applies the safe ones, `--fix --unsafe-fixes` all of them.\n\n````diff\n%s\n````\n' \
      "$fixes" >> "$GITHUB_STEP_SUMMARY"
  fi
fi
count() {
  python3 - "$counts_json" "$1" <<'PY'
import json, sys
try:
    data = json.load(open(sys.argv[1], encoding="utf-8"))
except (OSError, ValueError):
    print(0); raise SystemExit
rows = [*data.get("findings", []), *data.get("diagnostics", [])] if isinstance(data, dict) else data
print(sum(1 for f in rows if f.get("severity") == sys.argv[2] and not f.get("suppressed")))
PY
}
inventory=""
if [ -n "${SG_INVENTORY:-}" ]; then
  if subguard inventory "${paths[@]}" ${SG_CONFIG:+--config "$SG_CONFIG"} --format jsonl --output "$SG_INVENTORY"; then
    inventory="$SG_INVENTORY"
  else
    echo "::warning title=subguard::could not write the inventory to $SG_INVENTORY"
  fi
fi
{
  echo "errors=$(count error)"
  echo "warnings=$(count warning)"
  echo "notes=$(count note)"
  [ -s "$sarif" ] && echo "sarif-file=$sarif" || echo "sarif-file="
  echo "inventory-file=$inventory"
  echo "exit-code=$code"
} >> "${GITHUB_OUTPUT:-/dev/null}"
rm -f "$summary_md" "$counts_json"
# Usage and internal errors (exit 2) fail here; findings fail in the action's last step, after the upload.
[ "$code" -eq 2 ] && exit 2
exit 0
