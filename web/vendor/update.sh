#!/usr/bin/env bash
# Fetches the pinned browser libraries of web/vendor/ from the npm registry
# and copies the files the pages load (with their licenses) next to this
# script; the copies are committed and embedded in signal serve, so no page
# loads anything from a CDN at run time.
#
# To move to a newer version: change the version in package.json, run
#   npm install --package-lock-only --ignore-scripts
# here, then this script, and commit package.json, package-lock.json and
# the copied files together.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$here/package.json" "$here/package-lock.json" "$work/"
(cd "$work" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
d3="$work/node_modules/d3"
cp "$d3/dist/d3.min.js" "$here/d3.min.js"
cp "$d3/LICENSE" "$here/LICENSE-d3"
echo "web/vendor: d3 $(node -p "require('$d3/package.json').version") ($(wc -c <"$here/d3.min.js") bytes)"
