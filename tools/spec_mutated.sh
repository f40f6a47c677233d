#!/usr/bin/env bash
# Shows that every behaviour-spec runner can fail: with ZKRECIPES_SPEC_MUTATE=1 each expected
# `true` reads as `false`, so every runner must report failures (tests/spec/README.md). Runs the
# installed artifacts as `make test` left them (the Python venv, the Node project, the JARs).
set -uo pipefail
cd "$(dirname "$0")/.."
export ZKRECIPES_SPEC_MUTATE=1 ZK_HARNESS=$PWD/target/debug/zk-harness
host=$(rustc -vV | sed -n 's/^host: //p')
failed_as_expected=0
expect_failure() {
  local name=$1; shift
  if "$@" >/tmp/spec-mutated-$name.log 2>&1; then
    echo "spec runner $name passed with wrong expectations: it cannot fail (log /tmp/spec-mutated-$name.log)"
  else
    echo "spec runner $name failed with wrong expectations, as it must"
    failed_as_expected=$((failed_as_expected + 1))
  fi
}
expect_failure python tests/with-zk target/py-venv/bin/python -m pytest -q -p no:cacheprovider \
  --import-mode=importlib python/tests/test_spec.py
cp node/test/spec.test.js target/node-project/test/
expect_failure node bash -c 'cd target/node-project && ../../tests/with-zk node --test test/spec.test.js'
for lang in java kotlin; do
  expect_failure $lang tests/with-zk mvn -q -B -Dcargo.target="$host" -f $lang/pom.xml verify -Dcargo.skip=true \
    -Dit.test=SpecIT -Dtest=NoSuchTest -Dsurefire.failIfNoSpecifiedTests=false
done
[ "$failed_as_expected" -eq 4 ]
