#!/usr/bin/env bash
# Builds the Java driver (drivers/java) against one kafka-clients version from
# Maven Central and prints the jar's path on stdout; messages go to stderr.
#
#   jar=$(drivers/java/build.sh 4.3.1) && java -jar "$jar" --bootstrap HOST:PORT --topic T
#
# VERSION is 4.3.1 or 4.4.0 (org.apache.kafka:kafka-clients). The same source
# builds for both (mvn -Dkafka.version=VERSION). The jar goes to the cache
# outside git, ${KCHECK_CACHE:-$HOME/.cache/kcheck}/java-driver-VERSION-HASH/
# kcheck-java-driver.jar, HASH a digest of pom.xml and src/: a change to
# either builds a new jar, and an unchanged source builds nothing. The build
# runs in a copy of the source, so drivers/java gets no target/. Exit 2 when
# it cannot build (no mvn, no java, Maven cannot fetch the artifact).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
versions="4.3.1 4.4.0"
die() { printf 'java driver build: %s\n' "$*" >&2; exit 2; }

[ $# -eq 1 ] || die "usage: drivers/java/build.sh VERSION (one of: $versions)"
version=$1
case " $versions " in
*" $version "*) ;;
*) die "kafka-clients $version: not a version the driver is built for (one of: $versions); add it to drivers/java/build.sh and test it" ;;
esac
artifact=org.apache.kafka:kafka-clients:$version

hash=$(cd "$here" && find pom.xml src -type f | LC_ALL=C sort | while read -r f; do
  printf '%s\n' "$f"
  sha256sum <"$f"
done | sha256sum | cut -c1-12)
cache=${KCHECK_CACHE:-$HOME/.cache/kcheck}
dir=$cache/java-driver-$version-$hash
jar=$dir/kcheck-java-driver.jar
if [ -s "$jar" ]; then
  printf '%s\n' "$jar"
  exit 0
fi

command -v mvn >/dev/null || die "building against $artifact: mvn not found: install Maven (Debian: apt-get install maven), which fetches kafka-clients from Maven Central"
if [ -z "${JAVA_HOME:-}" ]; then
  command -v java >/dev/null || die "building against $artifact: java not found: install a JDK, 17 or later (Debian: apt-get install openjdk-17-jdk-headless)"
fi
mkdir -p "$cache" || die "cannot create the cache $cache: set KCHECK_CACHE"
tmp=$(mktemp -d "$cache/java-driver-$version.partial-XXXXXX") || die "cannot write to the cache $cache: set KCHECK_CACHE"
trap 'rm -rf "$tmp"' EXIT
cp -R "$here/pom.xml" "$here/src" "$tmp/"
echo "java driver build: building against $artifact into $dir" >&2
# -U retries what an earlier failed attempt left marked as missing in ~/.m2.
cmd=(mvn -B -q -U -Dstyle.color=never -f "$tmp/pom.xml" -Dkafka.version="$version" package)
if ! "${cmd[@]}" >"$tmp/mvn.log" 2>&1; then
  tail -n 20 "$tmp/mvn.log" | sed 's/^/  | /' >&2
  die "mvn could not build the driver against $artifact (command: ${cmd[*]/$tmp/<copy of drivers/java>}); check the network to Maven Central and that the version exists (mvn dependency:get -Dartifact=$artifact)"
fi
[ -s "$tmp/target/kcheck-java-driver.jar" ] || die "mvn built no target/kcheck-java-driver.jar against $artifact"
mkdir -p "$tmp/out"
mv "$tmp/target/kcheck-java-driver.jar" "$tmp/out/"
# Into place by a rename; a build that finished first wins.
if [ ! -s "$jar" ]; then
  rm -rf "$dir"
  mv -T "$tmp/out" "$dir" 2>/dev/null || [ -s "$jar" ] || die "cannot move the jar into $dir"
fi
printf '%s\n' "$jar"
