#!/usr/bin/env bash
# Copyright 2026 The spark-shuffle-rdma authors
# SPDX-License-Identifier: Apache-2.0
# Checks what bin/release deployed to a file repository, per line: the jar (the same bytes as
# dist/), sources and javadoc jars and the POM, each with matching .sha1/.md5; the POM's
# coordinates and the elements a repository such as Maven Central requires (name,
# description, url, licenses, scm, developers); only provided-scope dependencies (DiSNI is
# inside the jar). Then a fresh Maven (empty local repository; plugins come from the user's
# local repository as a file mirror, so no network is needed) resolves each line's
# coordinates from the file repository with dependency:get, as a consumer would, and must
# get the jar and nothing it depends on.
#
# Usage: bin/lib/check-release-repo.sh REPO_DIR VERSION LINE...
set -uo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)
# shellcheck source=lines.sh
. bin/lib/lines.sh
repo_dir=$1 version=$2
shift 2
group=io.github.sparkshufflerdma
failed=0
fail() { echo "[release-check] $*" >&2; failed=1; }

# The newest file of one kind (a SNAPSHOT deploy names files by timestamp and build number).
landed() {
  local dir=$1 aid=$2 suffix=$3 base=${version%-SNAPSHOT}
  if [[ "$version" == *-SNAPSHOT ]]; then
    ls "$dir/$aid-$base"-[0-9]*"$suffix" 2>/dev/null | grep -E -- "-[0-9]{8}\.[0-9]{6}-[0-9]+$suffix\$" \
      | sort -t- -k1,1 -V | tail -1
  else
    ls "$dir/$aid-$version$suffix" 2>/dev/null
  fi
}

check_pom() {  # check_pom POM ARTIFACT_ID
  local pom=$1 aid=$2 flat element
  flat=$(tr -d '\n\r' <"$pom" | sed -E 's/<!--([^-]|-[^-])*-->//g; s/>[[:space:]]+</></g')
  grep -q "<groupId>$group</groupId><artifactId>$aid</artifactId><version>$version</version>" <<<"$flat" \
    || fail "$pom: coordinates are not $group:$aid:$version"
  for element in name description url licenses/license/name licenses/license/url \
      developers/developer/name scm/connection scm/developerConnection scm/url; do
    # element a/b/c: <a>...<b>...<c>non-empty</c>
    local re
    re=$(sed -E 's#([^/]+)#<\1>#g; s#/#[^§]*#g' <<<"$element")
    grep -qE "${re}[^<]+</" <<<"$flat" || fail "$pom: no <${element//\//> <}> with text"
  done
  local deps bad
  deps=$(grep -oE '<dependency>.*?</dependency>' <<<"${flat//<\/dependency>/<\/dependency>$'\n'}")
  grep -q '<artifactId>spark-core_' <<<"$deps" || fail "$pom: Spark is not declared (provided)"
  bad=$(grep -v '<scope>provided</scope>' <<<"$deps" | grep -o '<artifactId>[^<]*' | sed 's/<artifactId>//')
  [ -z "$bad" ] || fail "$pom: dependencies a consumer would pull (not provided scope): $bad"
  grep -q '<artifactId>disni</artifactId>' <<<"$deps" && fail "$pom: declares DiSNI, which is inside the jar"
}

for line in "$@"; do
  aid=$(artifact_of "$line")
  dir="$repo_dir/${group//.//}/$aid/$version"
  [ -d "$dir" ] || { fail "Spark $line: nothing deployed at $dir"; continue; }
  for suffix in .jar -sources.jar -javadoc.jar .pom; do
    f=$(landed "$dir" "$aid" "$suffix")
    [ -n "$f" ] || { fail "Spark $line: no $aid $suffix in $dir"; continue; }
    [ "$(cat "$f.sha1" 2>/dev/null)" = "$(sha1sum "$f" | cut -d' ' -f1)" ] || fail "$f: .sha1 missing or wrong"
    [ "$(cat "$f.md5" 2>/dev/null)" = "$(md5sum "$f" | cut -d' ' -f1)" ] || fail "$f: .md5 missing or wrong"
    case "$suffix" in
      .jar) cmp -s "$f" "$root/dist/$aid-$version.jar" || fail "$f differs from dist/$aid-$version.jar" ;;
      .pom) check_pom "$f" "$aid" ;;
      # (the listing first: grep -q closing the pipe early would fail unzip under pipefail)
      -sources.jar) grep -qx 'org/apache/spark/shuffle/rdma/RdmaShuffleManager.java' <<<"$(unzip -Z1 "$f")" \
                      || fail "$f: no RdmaShuffleManager.java" ;;
      -javadoc.jar) grep -qx 'index.html' <<<"$(unzip -Z1 "$f")" || fail "$f: no index.html" ;;
    esac
  done
  [ -f "$repo_dir/${group//.//}/$aid/maven-metadata.xml" ] || fail "Spark $line: no maven-metadata.xml for $aid"
done

# A consumer: a fresh local repository, the user's local repository as the mirror of every
# repository but the release one (plugins without network), the release repository named
# on the command line.
check="$root/target/release-check"
rm -rf "$check" && mkdir -p "$check"
user_m2="${RELEASE_CHECK_USER_REPO:-$HOME/.m2/repository}"
cat >"$check/settings.xml" <<EOF
<settings>
  <localRepository>$check/m2</localRepository>
  <mirrors><mirror><id>user-local</id><mirrorOf>*,!release</mirrorOf><url>file://$user_m2</url></mirror></mirrors>
</settings>
EOF
for line in "$@"; do
  aid=$(artifact_of "$line")
  if ! (cd "$check" && mvn -B -q -s settings.xml \
        org.apache.maven.plugins:maven-dependency-plugin:3.8.1:get \
        -Dartifact="$group:$aid:$version" -Dtransitive=true \
        -DremoteRepositories="release::default::file://$repo_dir" >"$check/get-$line.log" 2>&1); then
    fail "Spark $line: a fresh Maven could not resolve $group:$aid:$version (log: ${check#"$root"/}/get-$line.log)"
    tail -5 "$check/get-$line.log" >&2
    continue
  fi
  got="$check/m2/${group//.//}/$aid/$version/$aid-$version.jar"
  cmp -s "$got" "$root/dist/$aid-$version.jar" || fail "Spark $line: resolved jar differs from dist/"
done
# Provided dependencies stay with the cluster: resolving brought no Spark, Scala or DiSNI jar.
pulled=$(find "$check/m2/org/apache/spark" "$check/m2/org/scala-lang" "$check/m2/com/ibm/disni" \
  -name '*.jar' 2>/dev/null | head -3)
[ -z "$pulled" ] || fail "resolving the plugin pulled jars a consumer must not get: $pulled"

if [ "$failed" = 0 ]; then
  echo "[release-check] OK: $* in ${repo_dir#"$root"/}: jar (= dist/), sources, javadoc, POM with" \
    "name/description/url/licenses/scm/developers and provided-only dependencies, checksums;" \
    "a fresh Maven resolved each from there and got nothing else"
fi
exit $failed
