#!/usr/bin/env bash
# Fetches the pinned axe-core from the npm registry and copies axe.min.js
# and its license here; the browser tests (ui_browser_test.go) inject it
# into each page and fail on serious or critical violations. To move to a
# newer version: change package.json, run
#   npm install --package-lock-only --ignore-scripts
# here, then this script, and commit the four files together.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$here/package.json" "$here/package-lock.json" "$work/"
(cd "$work" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
cp "$work/node_modules/axe-core/axe.min.js" "$here/axe.min.js"
cp "$work/node_modules/axe-core/LICENSE" "$here/LICENSE-axe-core"
echo "testdata/axe: axe-core $(node -p "require('$work/node_modules/axe-core/package.json').version") ($(wc -c <"$here/axe.min.js") bytes)"
