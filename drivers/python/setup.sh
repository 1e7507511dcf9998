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
# Every failure is exit 2 with a message on stderr that names the clients.
clients="the Python drivers' clients (librdkafka via confluent-kafka, aiokafka, kafka-python)"
fail() { echo "drivers/python/setup.sh: $*" >&2; exit 2; }
trap 'fail "setting up $clients failed (line $LINENO, exit $?)"' ERR
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

command -v "$base" >/dev/null ||
  fail "$base not found, needed for $clients: install Python 3 with its venv module, or set PYTHON to a python3"
"$base" -c 'import venv, ensurepip' 2>/dev/null ||
  fail "$base has no venv or ensurepip module, needed for $clients: install it (Debian, Ubuntu: apt-get install python3-venv) or set PYTHON to a python3 that has it"
if [ ! -x "$py" ] || ! "$py" -c 'import sys' 2>/dev/null; then
  rm -rf "$env"
  mkdir -p "$(dirname "$env")"
  "$base" -m venv "$env" >&2 ||
    fail "$base -m venv $env failed, so $clients are not installed: see the message above (Debian, Ubuntu: apt-get install python3-venv)"
fi
"$py" -m pip install --disable-pip-version-check -q -r "$req" >&2 ||
  fail "pip could not install $clients from $req (confluent-kafka, aiokafka, kafka-python and their pinned dependencies): see pip's message above; check that the package index (PyPI, or PIP_INDEX_URL) is reachable and serves these versions, then run drivers/python/setup.sh again"
"$py" -c "$imports" 2>/dev/null ||
  fail "$clients do not import after pip install -r $req: $("$py" -c "$imports" 2>&1 | tail -1)"
printf '%s\n' "$want" >"$stamp"
echo "$py"
