#!/usr/bin/env bash
# Runs a command with every core loaded by another process for its whole
# run: one busy loop per core (nproc, or LOAD_PROCS), started before the
# command and killed when it ends, however it ends. The command's exit status
# is the script's. Usage: nemesis/loaded.sh COMMAND [ARG...]
set -euo pipefail
if [ $# -eq 0 ]; then
  echo "usage: $0 COMMAND [ARG...]" >&2
  exit 2
fi
procs="${LOAD_PROCS:-$(nproc)}"
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT
for _ in $(seq "$procs"); do
  # A shell busy loop: all user CPU, no I/O, nothing to install.
  bash -c 'while :; do :; done' &
  pids+=("$!")
done
echo "loaded.sh: $procs busy loops (pids ${pids[*]}) while: $*" >&2
start=$(date +%s)
set +e
"$@"
rc=$?
set -e
echo "loaded.sh: $* exited $rc after $(( $(date +%s) - start )) s; load average: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
exit "$rc"
