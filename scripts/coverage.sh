#!/usr/bin/env bash
# Prints the line coverage of the Alcedo library (Sources/Alcedo) measured by the last
# `swift test --enable-code-coverage` (run by `make coverage`).
set -euo pipefail
cd "$(dirname "$0")/.."
SWIFT=${SWIFT:-swift}
report=$($SWIFT test --show-codecov-path)
if [ ! -f "$report" ]; then
    echo "no coverage report at $report: run swift test --enable-code-coverage first" >&2
    exit 1
fi
python3 - "$report" <<'PY'
import json, sys
data = json.load(open(sys.argv[1]))
covered = total = 0
for entry in data["data"][0]["files"]:
    if "/Sources/Alcedo/" in entry["filename"]:
        lines = entry["summary"]["lines"]
        covered += lines["covered"]
        total += lines["count"]
if total == 0:
    sys.exit("the report covers no file of Sources/Alcedo")
print(f"Alcedo library line coverage: {covered} of {total} lines, {100 * covered / total:.1f}%")
PY
