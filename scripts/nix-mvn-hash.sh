#!/usr/bin/env bash
# Prints the mvnHash of packages.middleware in flake.nix without a Nix daemon.
#
# It replays nixpkgs' maven.buildMavenPackage fixed-output derivation `fetchedMavenDeps`
# for the pinned nixpkgs (nixos-24.11): the same Maven release (checked against nixpkgs'
# hash), JAVA_HOME = the flake's mvnJdk (JDK 17), no user settings, the same command
#   mvn package -Dmaven.repo.local=$out/.m2 -DskipTests
# the same removal of *.lastUpdated, resolver-status.properties and _remote.repositories,
# and then the NAR hash (sha256, SRI) of $out, which is what outputHashMode = "recursive"
# compares. With Nix at hand, `nix build .#middleware` prints the same value on a mismatch.
#
# Usage: scripts/nix-mvn-hash.sh [runs]     (runs > 1 repeats from an empty repository
#        and fails unless every run gives the same hash; KEEP_OUT=DIR keeps a copy of $out)
# Needs: mvn (any version, only to fetch the pinned Maven), a JDK 17 (JAVA_HOME or
# /usr/lib/jvm/java-17-openjdk-*), nix-hash and nix from nix-bin.
set -euo pipefail

MAVEN_VERSION=3.9.9
MAVEN_NIX_HASH=sha256-epzfZ0/BcD1jgvXzMLPREOobUStR8WUoRtnk6KWI12Y=
runs=${1:-1}

root=$(cd "$(dirname "$0")/.." && pwd)
jdk=${JAVA_HOME:-$(ls -d /usr/lib/jvm/java-17-openjdk-* 2>/dev/null | head -n1)}
"$jdk/bin/java" -version 2>&1 | grep -q '"17\.' || {
  echo "nix-mvn-hash: JAVA_HOME must be a JDK 17 (got '$jdk')" >&2
  exit 1
}
nix() { command nix --extra-experimental-features nix-command "$@"; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The Maven distribution nixpkgs uses, as a Maven Central artifact.
(cd "$work" && mvn -B -q org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy \
  -Dartifact="org.apache.maven:apache-maven:$MAVEN_VERSION:tar.gz:bin" \
  -DoutputDirectory="$work" -Dmdep.stripVersion=false) >"$work/fetch.log" 2>&1 || {
  cat "$work/fetch.log" >&2
  exit 1
}
tarball="$work/apache-maven-$MAVEN_VERSION-bin.tar.gz"
got=$(nix hash file --type sha256 "$tarball")
if [[ $got != "$MAVEN_NIX_HASH" ]]; then
  echo "nix-mvn-hash: Maven $MAVEN_VERSION tarball is $got, nixpkgs expects $MAVEN_NIX_HASH" >&2
  exit 1
fi
tar -xzf "$tarball" -C "$work"
maven="$work/apache-maven-$MAVEN_VERSION"

# The flake's src = ./middleware. What Maven fetches depends on the POMs only (as long as the
# build succeeds), so take the committed sources, which compile, with the current POMs.
mkdir "$work/src"
git -C "$root" archive HEAD middleware | tar -x -C "$work/src"
(cd "$root" && git ls-files -z --cached --others --exclude-standard -- 'middleware/*pom.xml' \
  | xargs -0 cp --parents -t "$work/src")

hashes=()
for ((i = 1; i <= runs; i++)); do
  out="$work/out$i"
  build="$work/build$i"
  cp -r "$work/src/middleware" "$build"
  mkdir -p "$work/tmp"
  (cd "$build" && env -i \
    PATH="$maven/bin:$jdk/bin:/usr/bin:/bin" \
    JAVA_HOME="$jdk" \
    HOME="$work/homeless-shelter" \
    TMPDIR="$work/tmp" \
    mvn package -Dmaven.repo.local="$out/.m2" -DskipTests </dev/null >"$work/mvn$i.log" 2>&1) || {
    tail -n 40 "$work/mvn$i.log" >&2
    echo "nix-mvn-hash: the Maven build failed (log above)" >&2
    exit 1
  }
  find "$out" -type f \( \
    -name \*.lastUpdated \
    -o -name resolver-status.properties \
    -o -name _remote.repositories \) \
    -delete
  # Metadata files change upstream over time and would make the hash drift.
  if find "$out" -name 'maven-metadata*.xml' | grep -q .; then
    echo "nix-mvn-hash: warning: maven-metadata files fetched (version ranges?):" >&2
    find "$out" -name 'maven-metadata*.xml' >&2
  fi
  hashes+=("$(nix hash path --type sha256 "$out")")
  echo "run $i: ${hashes[-1]} ($(find "$out" -type f -name '*.jar' | wc -l) jars," \
    "$(find "$out" -type f -name '*.pom' | wc -l) poms)" >&2
  if [[ ${hashes[-1]} != "${hashes[0]}" ]]; then
    echo "nix-mvn-hash: runs disagree: ${hashes[*]}" >&2
    exit 1
  fi
done
if [[ -n ${KEEP_OUT:-} ]]; then
  rm -rf "$KEEP_OUT" && cp -r "$work/out1" "$KEEP_OUT"
fi
echo "${hashes[0]}"
