#!/usr/bin/env bash
# Fuzzes each Jazzer fuzz test in turn for SECONDS (default 60) and prints the executions and
# coverage libFuzzer reports.
#
# Usage: scripts/fuzz.sh [SECONDS]    fuzz every target
#        scripts/fuzz.sh --merge      fold the generated corpora into the checked-in inputs
#
# A run keeps what it generates in middleware/<module>/.cifuzz-corpus/ (not checked in) and writes
# findings into the test's inputs directory under src/test/resources, which `mvn test` replays.
# --merge adds to those inputs only generated ones that reach new coverage (libFuzzer -merge=1,
# inputs up to 1 KiB), for review and commit.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
targets=(
  "common org.mwlab.common.memcached.ReplyParserFuzzTest anyStream"
  "common org.mwlab.common.memcached.ReplyParserFuzzTest wellFormed"
  "core org.mwlab.middleware.RequestDecoderFuzzTest decode"
  "core org.mwlab.middleware.ServerRepliesFuzzTest anyReply"
  "core org.mwlab.middleware.ServerRepliesFuzzTest wellFormedReply"
  "loadgen org.mwlab.loadgen.ReplyReaderFuzzTest replies"
  "simplemq org.mwlab.simplemq.protocol.FrameFuzzTest decode"
  "simplemq org.mwlab.simplemq.server.SocketFuzzTest socket"
)
mvn=(mvn -B --no-transfer-progress -Dstyle.color=never -f middleware/pom.xml)
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT

mode=fuzz
secs=60
case ${1:-} in
  --merge) mode=merge ;;
  "") ;;
  *)
    [[ $1 =~ ^[1-9][0-9]*$ ]] || {
      echo "fuzz: SECONDS must be a positive integer or --merge, got '$1'" >&2
      exit 2
    }
    secs=$1
    ;;
esac

# Maven copies test resources but never deletes them: drop copies of removed inputs.
rm -rf middleware/*/target/test-classes/org/mwlab/*/*Inputs \
  middleware/*/target/test-classes/org/mwlab/*/*/*Inputs
"${mvn[@]}" -q test-compile

if [[ $mode == merge ]]; then
  for t in "${targets[@]}"; do
    read -r module cls method <<<"$t"
    corpus=middleware/$module/.cifuzz-corpus/$cls/$method
    if [[ ! -d $corpus ]]; then
      echo "fuzz: $cls#$method: no generated corpus, skipped"
      continue
    fi
    out=middleware/$module/src/test/resources/${cls//.//}Inputs/$method
    mkdir -p "$out"
    cp_file=$logs/$module.classpath
    if [[ ! -f $cp_file ]]; then
      # -am: the module's own modules (common) come from this build, not a repository.
      "${mvn[@]}" -q -pl "$module" -am test-compile dependency:build-classpath \
        -Dmdep.includeScope=test \
        -Dmdep.outputFile="$cp_file"
    fi
    before=$(find "$out" -type f | wc -l)
    classes=middleware/$module/target/test-classes:middleware/$module/target/classes
    java -cp "$classes:$(cat "$cp_file")" com.code_intelligence.jazzer.Jazzer \
      --target_class="$cls" --target_method="$method" \
      -merge=1 -max_len=1024 -use_value_profile=0 "$out" "$corpus" >"$logs/merge.log" 2>&1 || {
      tail -n 30 "$logs/merge.log" >&2
      exit 1
    }
    echo "fuzz: $cls#$method: $(($(find "$out" -type f | wc -l) - before)) inputs added to $out"
  done
  exit 0
fi

failed=0
summary=()
for t in "${targets[@]}"; do
  read -r module cls method <<<"$t"
  log=$logs/$method.log
  echo "fuzz: ${cls##*.}#$method for ${secs}s"
  status=ok
  JAZZER_FUZZ=1 "${mvn[@]}" -pl "$module" -am test -Dtest="$cls#$method" \
    -Dsurefire.failIfNoSpecifiedTests=false \
    -Djazzer.max_duration="${secs}s" >"$log" 2>&1 || status=FAILED
  # libFuzzer: "#<executions> <event> cov: <edges> ft: <features> corp: <n>/<size> ... exec/s: <r>"
  grep -E '^#[0-9]+[[:space:]]+(INITED|pulse|DONE)' "$log" | sed 's/^/  /' || true
  done_line=$(grep -E '^#[0-9]+[[:space:]]+DONE' "$log" | tail -n 1 || true)
  if [[ $status == FAILED ]]; then
    failed=1
    grep -E 'Test unit written to|FuzzTestFinding|Tests run:.*Fail' "$log" | head -n 6 >&2 || true
    [[ -n $done_line ]] || tail -n 40 "$log" >&2
  fi
  summary+=("$(awk -v t="${cls##*.}#$method" -v s="$status" '
    { for (i = 1; i <= NF; i++) v[$i] = $(i + 1); execs = substr($1, 2) }
    END { printf "%-46s %-6s executions %-10s cov %-5s ft %-6s corpus %-12s exec/s %s\n",
          t, s, execs, v["cov:"], v["ft:"], v["corp:"], v["exec/s:"] }' <<<"${done_line:-#- }")")
done
echo "fuzz: summary (${secs}s per target)"
printf '  %s\n' "${summary[@]}"
exit "$failed"
