#!/usr/bin/env bash
# The package as a user meets it: packs presa-mcp the way `npm publish` would (`npm pack`, whose
# `prepack` builds dist/), lints the package (`publint`, `attw`), checks what the tarball holds,
# installs it with its peer dependencies into a fresh project outside this checkout and runs the
# files of test/consumer/ there:
#   (a) plain `node` (no loader): client.mjs spawns server.mjs over stdio and calls its tool;
#       entrypoints.mjs imports every entry point and checks that internal/ is refused, and that
#       presa-mcp/AiToolkit alone needs the optional peer @effect/ai (not installed there);
#   (b) `tsc --noEmit` of consumer.ts under NodeNext, bundler and node10 resolution (`strict`,
#       `skipLibCheck: false`, `@types/node`, no DOM lib): no diagnostic in consumer.ts or in
#       presa-mcp's declarations (scripts/tsc-consumer.mjs lists the peers' own DOM/ws ones);
#       declaration.ts under NodeNext with `declaration: true`: its exported values have inferred
#       types that mention the error classes, so they must be declared in public modules (TS2742);
#   (c) require.cjs: `require("presa-mcp")` from CommonJS works (Node >= 20.19) or fails with
#       ERR_REQUIRE_ESM (older Node), as docs/getting-started.md ("CommonJS") says;
#   (d) the tarball holds dist/ (JS, declarations, maps), src/, LICENSE, README, CHANGELOG and no
#       tests, benchmarks, fixtures, examples or conformance harness;
#   (e) the `presa-mcp` bin: `npx presa-mcp --help` prints the exit codes, and
#       `npx presa-mcp call add numbers=[1,2,3] --json -- node server.mjs` calls the tool.
#
#   bash scripts/package-test.sh
#
# Needs the npm registry (the consumer project installs the peers and the package's
# dependencies). Peers and TypeScript tooling are installed at the versions this repository pins
# in devDependencies. Prints "ok - …" / "FAIL - …" per check and, last, "package: N passed,
# N failed"; with PACKAGE_TEST_REPORT=<file> it also writes {"passed":N,"failed":N} there. Exit
# status 0 only when every check passed. KEEP_PACKAGE_TEST=1 keeps the temporary directory.
set -uo pipefail
cd "$(dirname "$0")/.."
REPO="$PWD"
CONSUMER_SRC="$REPO/test/consumer"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/presa-mcp-package-test.XXXXXX")"
APP="$WORK/app"
LOGS="$WORK/logs"
mkdir -p "$APP" "$LOGS"
if [[ "${KEEP_PACKAGE_TEST:-}" == 1 ]]; then
  echo "package-test: keeping $WORK"
else
  trap 'rm -rf "$WORK"' EXIT
fi

passed=0
failed=0
n=0
# check <name> <command…>: runs the command with its output in a log; on failure prints the log's tail.
check() {
  local name="$1" log
  shift
  n=$((n + 1))
  log="$LOGS/$n.log"
  local start=$SECONDS
  if "$@" >"$log" 2>&1; then
    passed=$((passed + 1))
    echo "ok - $name ($((SECONDS - start))s)"
  else
    failed=$((failed + 1))
    echo "FAIL - $name ($((SECONDS - start))s); last lines of its output:"
    tail -n 40 "$log" | sed 's/^/    /'
  fi
}
# skip <name>: a check that could not run because an earlier step failed counts as failed.
skip() {
  failed=$((failed + 1))
  echo "FAIL - $1 (not run: $2)"
}
finish() {
  echo "package: $passed passed, $failed failed"
  if [[ -n "${PACKAGE_TEST_REPORT:-}" ]]; then
    printf '{"passed":%d,"failed":%d}\n' "$passed" "$failed" >"$PACKAGE_TEST_REPORT"
  fi
  [[ "$failed" == 0 ]]
  exit $?
}

pin() { node -p "require('./package.json').devDependencies['$1']"; }
TSC="$REPO/node_modules/.bin/tsc"

# ---------------------------------------------------------------- pack and lint
pack() {
  npm pack --pack-destination "$WORK" --json >"$WORK/pack.json" || return 1
  TARBALL="$WORK/$(node -p "require('$WORK/pack.json')[0].filename")"
  [[ -f "$TARBALL" ]]
}
check "npm pack (prepack builds dist/)" pack
TARBALL="$WORK/$(node -p "try { require('$WORK/pack.json')[0].filename } catch { '' }" 2>/dev/null)"
if [[ ! -f "$TARBALL" ]]; then
  for c in "exports map matches src/" publint attw "tarball contents" "consumer install" \
    "(a) node: stdio server + client" "(a) node: every entry point, internal/ refused" \
    "(b) tsc NodeNext" "(b) tsc bundler" "(b) tsc node10" "(b) tsc declaration emit" "(c) require from CommonJS" \
    "(e) npx presa-mcp --help" "(e) npx presa-mcp call"; do
    skip "$c" "no tarball"
  done
  finish
fi

check "exports map matches src/ (node scripts/exports.mjs --check)" node scripts/exports.mjs --check
check "publint --strict" npx --no-install publint --strict
# cjs-resolves-to-esm: `require("presa-mcp")` loads the ES module through Node's require(esm)
# (Node >= 20.19 / 22.12); check (c) runs it. Explained in docs/getting-started.md ("CommonJS").
check "attw (ignoring cjs-resolves-to-esm, see docs/getting-started.md)" \
  npx --no-install attw "$TARBALL" --ignore-rules cjs-resolves-to-esm --format table-flipped --no-color

contents() {
  local list="$WORK/contents.txt"
  tar -tzf "$TARBALL" | sort >"$list" || return 1
  echo "$(wc -l <"$list") files"
  local bad
  bad="$(grep -E '^package/(test|tests|bench|conformance|examples|scripts|docs|\.ci|coverage|node_modules)/|fixture|\.test\.|\.spec\.|\.tsbuildinfo$|\.tgz$' "$list")"
  if [[ -n "$bad" ]]; then
    echo "must not be packed:"
    echo "$bad"
    return 1
  fi
  local missing=0 f
  for f in package/package.json package/LICENSE package/README.md package/CHANGELOG.md \
    package/dist/index.js package/dist/index.d.ts package/dist/index.js.map package/dist/index.d.ts.map \
    package/dist/transport/Stdio.js package/dist/transport/Stdio.d.ts package/src/index.ts \
    package/dist/bin.js package/dist/internal/cli/main.js; do
    grep -qxF "$f" "$list" || {
      echo "missing: $f"
      missing=1
    }
  done
  # every src/*.ts public module has its JS and declarations
  local m
  for m in $(cd src && ls ./*.ts transport/*.ts | sed 's|^\./||; s|\.ts$||'); do
    grep -qxF "package/dist/$m.js" "$list" || { echo "missing: dist/$m.js"; missing=1; }
    grep -qxF "package/dist/$m.d.ts" "$list" || { echo "missing: dist/$m.d.ts"; missing=1; }
  done
  return "$missing"
}
check "(d) tarball contents: dist/, src/, LICENSE, README, CHANGELOG; no tests, benchmarks, fixtures" contents

# ---------------------------------------------------------------- consumer project
install() (
  cp "$CONSUMER_SRC"/* "$APP"/ &&
    cd "$APP" &&
    printf '{ "name": "presa-mcp-consumer", "private": true, "type": "module" }\n' >package.json &&
    npm install --no-audit --no-fund --loglevel=error \
      "$TARBALL" \
      "effect@$(cd "$REPO" && pin effect)" \
      "@effect/platform@$(cd "$REPO" && pin @effect/platform)" \
      "@effect/platform-node@$(cd "$REPO" && pin @effect/platform-node)" \
      "@types/node@$(cd "$REPO" && pin @types/node)" \
      "ioredis@$(cd "$REPO" && pin ioredis)" &&
    node -p "'presa-mcp ' + require('presa-mcp/package.json').version + ', effect ' + require('effect/package.json').version"
)
check "consumer install (tarball + peers into $APP)" install
if [[ ! -d "$APP/node_modules/presa-mcp" ]]; then
  for c in "(a) node: stdio server + client" "(a) node: every entry point, internal/ refused" \
    "(b) tsc NodeNext" "(b) tsc bundler" "(b) tsc node10" "(b) tsc declaration emit" "(c) require from CommonJS" \
    "(e) npx presa-mcp --help" "(e) npx presa-mcp call"; do
    skip "$c" "consumer install failed"
  done
  finish
fi

stdio_roundtrip() {
  local out
  out="$(cd "$APP" && timeout 90 node client.mjs)" || return 1
  echo "$out"
  [[ "$out" == '{"era":"modern","protocolVersion":"2026-07-28","server":"consumer-server","tools":["add"],"structuredContent":{"sum":6}}' ]]
}
check "(a) node (no loader): client.mjs spawns server.mjs over stdio, tools/call add → {sum: 6}" stdio_roundtrip
check "(a) node: every entry point imports; internal/ and unlisted subpaths refused" \
  bash -c "cd '$APP' && timeout 60 node entrypoints.mjs"

for mode in nodenext bundler node10; do
  check "(b) tsc --noEmit consumer.ts ($mode; strict, skipLibCheck false, @types/node, no DOM)" \
    bash -c "cd '$APP' && node '$REPO/scripts/tsc-consumer.mjs' '$TSC' tsconfig.$mode.json"
done

check "(b) tsc declaration.ts (NodeNext, declaration: true): inferred exported types name no internal module (TS2742)" \
  bash -c "cd '$APP' && node '$REPO/scripts/tsc-consumer.mjs' '$TSC' tsconfig.declaration.json"

require_cjs() {
  local out
  out="$(cd "$APP" && timeout 60 node require.cjs)" || return 1
  echo "$out"
  [[ "$out" == '{"require":"ok",'*'"era":"modern","text":"from require"}' || "$out" == '{"require":"ERR_REQUIRE_ESM",'* ]]
}
check "(c) require(\"presa-mcp\") from CommonJS (Node $(node --version))" require_cjs

# The command line as a user meets it after installing the package (package.json `bin`).
cli_help() {
  local out
  out="$(cd "$APP" && timeout 60 npx --no-install presa-mcp --help)" || return 1
  echo "$out"
  [[ "$out" == *"EXIT CODES"* && "$out" == *"listen"* ]]
}
check "(e) npx presa-mcp --help (the bin from the installed tarball)" cli_help
cli_call() {
  local out
  out="$(cd "$APP" && timeout 90 npx --no-install presa-mcp call add 'numbers=[1,2,3]' --json -- node server.mjs)" || return 1
  echo "$out"
  [[ "$(node -e 'process.stdout.write(JSON.stringify(JSON.parse(process.argv[1]).structuredContent))' "$out")" == '{"sum":6}' ]]
}
check "(e) npx presa-mcp call add numbers=[1,2,3] --json -- node server.mjs → structuredContent {sum: 6}" cli_call

finish
