#!/usr/bin/env bash
# Builds the Java driver (drivers/java) against one kafka-clients and prints
# the jar's path on stdout; messages go to stderr.
#
#   jar=$(drivers/java/build.sh 4.3.1) && java -jar "$jar" --bootstrap HOST:PORT --topic T
#   jar=$(drivers/java/build.sh --jar ~/kafka/clients/build/libs/kafka-clients-4.5.0-SNAPSHOT.jar)
#
# VERSION is any version of org.apache.kafka:kafka-clients Maven Central
# serves (mvn -Dkafka.version=VERSION; the driver is tested with 4.3.1 and
# 4.4.0, and an older client may lack what it calls: then it does not
# compile). --jar PATH builds against a local kafka-clients jar instead, a
# build of apache/kafka (mvn -Dkafka.jar, pom.xml's profile local-jar): the
# jar is copied beside the driver's as kafka-clients.jar, which the driver's
# manifest puts on its class path, and kafka-clients 4.4.0's compression
# and logging libraries are shaded in (a jar alone does not name them).
#
# The jar goes to the cache outside git, ${KCHECK_CACHE:-$HOME/.cache/kcheck}/
# java-driver-VERSION-HASH/ (--jar: java-driver-jar-JARHASH-HASH/, JARHASH
# the first 12 hex digits of the jar's sha256) /kcheck-java-driver.jar, HASH
# a digest of pom.xml and src/: a change to either builds a new jar, and an
# unchanged source builds nothing. The build runs in a copy of the source,
# so drivers/java gets no target/. Exit 2 when it cannot build (no mvn, no
# java, Maven Central has no such version, no such jar, or the driver does
# not compile against it), the reason on the last line of stderr.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
die() { printf 'java driver build: %s\n' "$*" >&2; exit 2; }
usage="usage: drivers/java/build.sh VERSION | --jar PATH"

mvnargs=()
case "${1:-}" in
--jar)
  [ $# -eq 2 ] || die "$usage"
  src=$2
  [ -e "$src" ] || die "--jar $src: no such file"
  [ -f "$src" ] && [ -r "$src" ] || die "--jar $src: not a readable file"
  src=$(cd "$(dirname "$src")" && pwd)/$(basename "$src")
  command -v jar >/dev/null || die "--jar $src: jar (the JDK's) not found: install a JDK, 17 or later"
  jar tf "$src" 2>/dev/null | grep -qx 'org/apache/kafka/clients/producer/KafkaProducer.class' ||
    die "--jar $src: not a kafka-clients jar (no org/apache/kafka/clients/producer/KafkaProducer.class in it)"
  jarhash=$(sha256sum <"$src" | cut -c1-12)
  what="the local jar $src (sha256 $jarhash)"
  name=jar-$jarhash
  ;;
-*) die "$usage" ;;
*)
  [ $# -eq 1 ] || die "$usage"
  version=$1
  [[ $version =~ ^[0-9A-Za-z][0-9A-Za-z._+-]*$ ]] || die "kafka-clients $version: not a version ($usage)"
  what=org.apache.kafka:kafka-clients:$version
  name=$version
  mvnargs=(-Dkafka.version="$version")
  ;;
esac

hash=$(cd "$here" && find pom.xml src -type f | LC_ALL=C sort | while read -r f; do
  printf '%s\n' "$f"
  sha256sum <"$f"
done | sha256sum | cut -c1-12)
cache=${KCHECK_CACHE:-$HOME/.cache/kcheck}
dir=$cache/java-driver-$name-$hash
jar=$dir/kcheck-java-driver.jar
if [ -s "$jar" ]; then
  printf '%s\n' "$jar"
  exit 0
fi

command -v mvn >/dev/null || die "building against $what: mvn not found: install Maven (Debian: apt-get install maven), which fetches kafka-clients from Maven Central"
if [ -z "${JAVA_HOME:-}" ]; then
  command -v java >/dev/null || die "building against $what: java not found: install a JDK, 17 or later (Debian: apt-get install openjdk-17-jdk-headless)"
fi
mkdir -p "$cache" || die "cannot create the cache $cache: set KCHECK_CACHE"
tmp=$(mktemp -d "$cache/java-driver-$name.partial-XXXXXX") || die "cannot write to the cache $cache: set KCHECK_CACHE"
trap 'rm -rf "$tmp"' EXIT
cp -R "$here/pom.xml" "$here/src" "$tmp/"
mkdir -p "$tmp/out"
if [ -n "${jarhash:-}" ]; then
  # The copy, not the user's file, is what the driver runs with and what
  # JARHASH names.
  cp "$src" "$tmp/out/kafka-clients.jar"
  [ "$(sha256sum <"$tmp/out/kafka-clients.jar" | cut -c1-12)" = "$jarhash" ] || die "--jar $src changed while it was copied"
  mvnargs=(-Dkafka.jar="$tmp/out/kafka-clients.jar")
fi
echo "java driver build: building against $what into $dir" >&2
# -U retries what an earlier failed attempt left marked as missing in ~/.m2.
cmd=(mvn -B -q -U -Dstyle.color=never -f "$tmp/pom.xml" "${mvnargs[@]}" package)
shown="${cmd[*]}"
[ -z "${jarhash:-}" ] || shown=${shown//$tmp\/out\/kafka-clients.jar/$src}
shown=${shown//$tmp\/pom.xml/<copy of drivers\/java>\/pom.xml}
if ! "${cmd[@]}" >"$tmp/mvn.log" 2>&1; then
  # Maven's last lines, without its colour codes, each ending in a newline,
  # naming the source as in the repository.
  tail -n 20 "$tmp/mvn.log" | sed "s/\x1b\[[0-9;]*m//g; s|$tmp/|drivers/java/|g" | awk '{ print "  | " $0 }' >&2
  # Maven Central's answer when it has no such artifact, in Maven's words.
  if answer=$(grep -o "Could not find artifact org.apache.kafka:kafka-clients[^ ]* in [^)]*)" "$tmp/mvn.log" | head -n 1) && [ -n "$answer" ]; then
    die "$what: Maven Central does not serve it: \"$answer\" (command: $shown)"
  fi
  if answer=$(grep -m1 -o "\[ERROR\] /.*\.java:.*" "$tmp/mvn.log" | sed "s|\[ERROR\] $tmp/|drivers/java/|") && [ -n "$answer" ]; then
    die "the driver does not compile against $what: $answer (command: $shown; mvn's last lines above)"
  fi
  die "mvn could not build the driver against $what (command: $shown; mvn's last lines above); check the network to Maven Central and that the version exists (mvn dependency:get -Dartifact=org.apache.kafka:kafka-clients:VERSION)"
fi
[ -s "$tmp/target/kcheck-java-driver.jar" ] || die "mvn built no target/kcheck-java-driver.jar against $what"
mv "$tmp/target/kcheck-java-driver.jar" "$tmp/out/"
# Into place by a rename; a build that finished first wins.
if [ ! -s "$jar" ]; then
  rm -rf "$dir"
  mv -T "$tmp/out" "$dir" 2>/dev/null || [ -s "$jar" ] || die "cannot move the jar into $dir"
fi
printf '%s\n' "$jar"
