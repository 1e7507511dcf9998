#!/usr/bin/env bash
# Sets up the Python drivers (driver.py: librdkafka through confluent-kafka;
# aiokafka_driver.py; kafka_python_driver.py): one virtualenv in
# ${KCHECK_CACHE:-$HOME/.cache/kcheck}/pyenv, outside git,
# with requirements.txt installed. A no-op when it is already up to date.
# Prints the path of the virtualenv's python on stdout; messages go to stderr.
#
#   py=$(drivers/python/setup.sh) && "$py" drivers/python/driver.py --bootstrap HOST:PORT --topic T
#   "$py" drivers/python/aiokafka_driver.py ...; "$py" drivers/python/kafka_python_driver.py ...
#
# PYTHON picks the interpreter that makes the virtualenv (default: python3).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
req=$here/requirements.txt
env=${KCHECK_CACHE:-$HOME/.cache/kcheck}/pyenv
py=$env/bin/python
stamp=$env/.kcheck-requirements
base=${PYTHON:-python3}
# The three clients (module names); the env is up to date only if each imports.
imports='import confluent_kafka, aiokafka, kafka'

# The stamp records the requirements and the interpreter the env was made
# with; when both match and the env's python imports every client, there is
# nothing to do.
want=$(cat "$req"; "$base" -c 'import sys; print(sys.version)' 2>/dev/null || echo "no $base")
if [ -x "$py" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && "$py" -c "$imports" 2>/dev/null; then
  echo "$py"
  exit 0
fi

command -v "$base" >/dev/null || { echo "setup.sh: $base not found (set PYTHON)" >&2; exit 2; }
if [ ! -x "$py" ] || ! "$py" -c 'import sys' 2>/dev/null; then
  rm -rf "$env"
  mkdir -p "$(dirname "$env")"
  "$base" -m venv "$env" >&2 || { echo "setup.sh: $base -m venv $env failed (on Debian: apt-get install python3-venv)" >&2; exit 2; }
fi
"$py" -m pip install --disable-pip-version-check -q -r "$req" >&2 || { echo "setup.sh: pip install -r $req failed" >&2; exit 2; }
printf '%s\n' "$want" >"$stamp"
echo "$py"
