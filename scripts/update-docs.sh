#!/usr/bin/env bash
# Regenerates the command tables in docs/commands.md from the server's command table.
# Usage: scripts/update-docs.sh [path-to-slipstream-binary]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-build/src/cli/slipstream}
doc=docs/commands.md
begin='<!-- BEGIN GENERATED: slipstream commands -->'
end='<!-- END GENERATED -->'
generated=$("$bin" commands)
awk -v begin="$begin" -v end="$end" -v body="$generated" '
  $0 == begin { print; print body; skipping = 1; next }
  $0 == end { skipping = 0 }
  !skipping { print }
' "$doc" > "$doc.tmp"
mv "$doc.tmp" "$doc"
echo "updated $doc"
