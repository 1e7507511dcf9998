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
# Every failure is exit 2 with a message on stderr that names the client.
client="the kafkajs driver's client (kafkajs 2.2.4, kafkajs-snappy 1.1.0)"
fail() { echo "drivers/kafkajs/setup.sh: $*" >&2; exit 2; }
trap 'fail "setting up $client failed (line $LINENO, exit $?)"' ERR
here=$(cd "$(dirname "$0")" && pwd)
dir=${KCHECK_CACHE:-$HOME/.cache/kcheck}/kafkajs
wrapper=$dir/bin/node
stamp=$dir/.kcheck-lock
base=${NODE:-node}

command -v "$base" >/dev/null ||
  fail "$base not found, needed for $client: install Node.js 20 or later (with npm), or set NODE to a node binary"
command -v npm >/dev/null ||
  fail "npm not found, needed to install $client: install npm (it comes with Node.js; Debian, Ubuntu: apt-get install npm) and put it on PATH"
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
  fail "npm ci in $dir could not install $client from package-lock.json: see npm's message above; check that the registry (registry.npmjs.org, or npm_config_registry) is reachable and serves these versions, then run drivers/kafkajs/setup.sh again"
cat >"$wrapper" <<EOF
#!/bin/sh
# Written by drivers/kafkajs/setup.sh: $node_bin with the modules of $dir.
NODE_PATH='$dir/node_modules' exec '$node_bin' "\$@"
EOF
chmod +x "$wrapper"
"$wrapper" -e 'require("kafkajs"); require("kafkajs-snappy")' >&2 ||
  fail "$client does not load with $node_bin after npm ci in $dir: see the message above"
printf '%s\n' "$want" >"$stamp"
echo "$wrapper"
