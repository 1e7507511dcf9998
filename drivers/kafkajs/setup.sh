#!/usr/bin/env bash
# Sets up the kafkajs driver (driver.js): package.json and package-lock.json
# copied to ${KCHECK_CACHE:-$HOME/.cache/kcheck}/kafkajs, outside git, and
# installed there with npm ci; a no-op when it is already up to date. Prints
# the path of a node that finds those modules (a wrapper that sets NODE_PATH)
# on stdout; messages go to stderr.
#
#   node=$(drivers/kafkajs/setup.sh) && "$node" drivers/kafkajs/driver.js --bootstrap HOST:PORT --topic T
#
# NODE picks the node the wrapper runs (default: node on PATH; Node 20).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dir=${KCHECK_CACHE:-$HOME/.cache/kcheck}/kafkajs
wrapper=$dir/bin/node
stamp=$dir/.kcheck-lock
base=${NODE:-node}

command -v "$base" >/dev/null || { echo "setup.sh: $base not found (set NODE)" >&2; exit 2; }
command -v npm >/dev/null || { echo "setup.sh: npm not found" >&2; exit 2; }
node_bin=$(command -v "$base")
node_bin=$(cd "$(dirname "$node_bin")" && pwd)/$(basename "$node_bin")

# The stamp records the lock file and the node the modules were installed
# for; when both match and kafkajs loads, there is nothing to do.
want=$(cat "$here/package.json" "$here/package-lock.json"; echo "$node_bin"; "$node_bin" --version)
if [ -x "$wrapper" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] &&
  "$wrapper" -e 'require("kafkajs"); require("kafkajs-snappy")' 2>/dev/null; then
  echo "$wrapper"
  exit 0
fi

mkdir -p "$dir/bin"
rm -f "$stamp"
cp "$here/package.json" "$here/package-lock.json" "$dir/"
(cd "$dir" && npm ci --no-audit --no-fund --loglevel=error >&2) ||
  { echo "setup.sh: npm ci in $dir failed" >&2; exit 2; }
cat >"$wrapper" <<EOF
#!/bin/sh
# Written by drivers/kafkajs/setup.sh: $node_bin with the modules of $dir.
NODE_PATH='$dir/node_modules' exec '$node_bin' "\$@"
EOF
chmod +x "$wrapper"
"$wrapper" -e 'require("kafkajs"); require("kafkajs-snappy")' >&2 ||
  { echo "setup.sh: kafkajs does not load after npm ci in $dir" >&2; exit 2; }
printf '%s\n' "$want" >"$stamp"
echo "$wrapper"
