#!/usr/bin/env bash
# Runs the official MCP conformance suite (@modelcontextprotocol/conformance, pinned
# 0.1.16 and 0.2.0-alpha.12 in conformance/package.json) against our fixture server
# (examples/conformance-server.ts) and our client program (examples/conformance-client.ts).
#
#   bash conformance/run.sh [server|client|all]        (default: all)
#
# The suite needs Node >= 22. Node 22 comes from the npm package `node` installed in
# conformance/node_modules (never in the main package). Only the suite's own process
# runs on it: the suite is started with that binary by absolute path, and PATH is
# left alone, so the server under test and the client under test (which the suite
# spawns through a shell) run on the main Node (20) like the library's tests.
#
# Environment (all optional):
#   CONFORMANCE_SERVER_CMD         server command, `{port}` is replaced by the port.
#                                  Default: npx tsx examples/conformance-server.ts --port {port}
#   CONFORMANCE_SKILLS_SERVER_CMD  skills-declaring server, same placeholder. Default: the
#                                  default server command plus --skills. When
#                                  CONFORMANCE_SERVER_CMD is set and this is not, the skills
#                                  runs are skipped. Set it to "" to skip them explicitly.
#   CONFORMANCE_CLIENT_CMD         client command; the suite appends the scenario server URL
#                                  as the last argument and sets MCP_CONFORMANCE_SCENARIO,
#                                  MCP_CONFORMANCE_PROTOCOL_VERSION, MCP_CONFORMANCE_CONTEXT.
#                                  It is split on spaces (no quoting). Default: the client
#                                  bundled once per invocation with the repo's esbuild (the
#                                  one tsx uses) into <results>/.client/conformance-client.mjs
#                                  and run as `node <bundle>`: the suite starts dozens of
#                                  clients at once, and a bundle starts ~10x faster than tsx.
#                                  Without esbuild: npx tsx <repo>/examples/conformance-client.ts
#   CONFORMANCE_RUNS               space/comma separated run names to run (default: all runs
#                                  of the chosen side). Names are listed by `run.sh list`.
#   CONFORMANCE_SCENARIO           run only this scenario in each selected run (e.g. with
#                                  CONFORMANCE_RUNS=server-0.2-req-2026-07-28); requirement
#                                  runs keep their wire version via --spec-version.
#   CONFORMANCE_EXPECTED_DIR       where expected-failures-<run>.yaml live (default:
#                                  conformance/). A missing file means "no baseline".
#   CONFORMANCE_RESULTS_DIR        output root (default: conformance/results); each run
#                                  writes <root>/<run>/ (wiped first).
#   CONFORMANCE_RUN_TIMEOUT        seconds one suite invocation may take (default 1200).
#   CONFORMANCE_MAX_RERUN          a client run that fails re-runs up to this many failed
#                                  scenarios, each alone (default 3; 0: never). The suite starts
#                                  all of a run's clients at once, which on 2 cores can make a
#                                  scenario miss a deadline; the run passes only if each
#                                  re-run passes, and the summary line names them.
#   CONFORMANCE_SERVER_START_TIMEOUT  seconds to wait for the server to accept (default 30).
#   CONFORMANCE_ALLOW_SHARED_NET=1 run the client suite without a private network
#                                  namespace when `unshare -rn` is unavailable (its scenario
#                                  servers then listen on all interfaces). Default: refuse.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/.." && pwd)"
cd "$REPO"

SIDE="${1:-all}"

NODE22="$HERE/node_modules/node/bin/node"
SUITE_01="$HERE/node_modules/conformance-0.1/dist/index.js"
SUITE_02="$HERE/node_modules/conformance-0.2/dist/index.js"
REQ_DIR="$HERE/node_modules/conformance-0.2/requirements"
EXPECTED_DIR="${CONFORMANCE_EXPECTED_DIR:-$HERE}"
RESULTS_ROOT="${CONFORMANCE_RESULTS_DIR:-$HERE/results}"
RUN_TIMEOUT="${CONFORMANCE_RUN_TIMEOUT:-1200}"
MAX_RERUN="${CONFORMANCE_MAX_RERUN:-3}"
START_TIMEOUT="${CONFORMANCE_SERVER_START_TIMEOUT:-30}"

DEFAULT_SERVER_CMD="npx tsx examples/conformance-server.ts --port {port}"
if [[ -n "${CONFORMANCE_SERVER_CMD:-}" ]]; then
  SERVER_CMD="$CONFORMANCE_SERVER_CMD"
  SKILLS_SERVER_CMD="${CONFORMANCE_SKILLS_SERVER_CMD-}"
else
  SERVER_CMD="$DEFAULT_SERVER_CMD"
  SKILLS_SERVER_CMD="${CONFORMANCE_SKILLS_SERVER_CMD-$DEFAULT_SERVER_CMD --skills}"
fi
TSX_CLIENT_CMD="npx tsx $REPO/examples/conformance-client.ts"
CLIENT_CMD="${CONFORMANCE_CLIENT_CMD:-}"

# ---------------------------------------------------------------- run catalogue
# name|suite|side|instance|args      (instance: main or skills; {url} is replaced)
RUNS=(
  "server-0.2-req-2026-07-28|0.2|server|main|server --url {url} --requirements 2026-07-28"
  "server-0.2-req-2025-11-25|0.2|server|main|server --url {url} --requirements 2025-11-25"
  "server-0.2-all|0.2|server|main|server --url {url} --suite all"
  "server-0.2-all-2026-07-28|0.2|server|main|server --url {url} --suite all --spec-version 2026-07-28"
  "server-0.1-all|0.1|server|main|server --url {url} --suite all"
  "server-0.2-skills|0.2|server|skills|server --url {url} --scenario sep-2640-skills-enumeration;server --url {url} --scenario sep-2640-skills-manifest;server --url {url} --scenario sep-2640-skills-directory"
  "server-0.2-skills-2025-11-25|0.2|server|skills|server --url {url} --spec-version 2025-11-25 --force --scenario sep-2640-skills-enumeration;server --url {url} --spec-version 2025-11-25 --force --scenario sep-2640-skills-manifest;server --url {url} --spec-version 2025-11-25 --force --scenario sep-2640-skills-directory"
  "client-0.2-req-2026-07-28|0.2|client|-|client --command {client} --timeout 120000 --requirements 2026-07-28"
  "client-0.2-req-2025-11-25|0.2|client|-|client --command {client} --timeout 120000 --requirements 2025-11-25"
  "client-0.2-all|0.2|client|-|client --command {client} --timeout 120000 --suite all"
  "client-0.1-all|0.1|client|-|client --command {client} --timeout 120000 --suite all"
)

log() { printf '[conformance] %s\n' "$*" >&2; }
die() { log "error: $*"; exit 2; }

usage() {
  cat >&2 <<EOF
usage: bash conformance/run.sh [server|client|all|list]
EOF
  exit 2
}

case "$SIDE" in
  server|client|all) ;;
  list)
    for r in "${RUNS[@]}"; do IFS='|' read -r n _ s i _ <<<"$r"; printf '%-32s %s (%s)\n' "$n" "$s" "$i"; done
    exit 0 ;;
  -h|--help|help) usage ;;
  *) usage ;;
esac

# ---------------------------------------------------------------- install
if [[ ! -x "$NODE22" || ! -f "$SUITE_01" || ! -f "$SUITE_02" ]]; then
  log "installing the suite and Node 22 (npm ci --prefix conformance)"
  timeout 600 npm ci --prefix "$HERE" --no-audit --no-fund >&2 || die "npm ci --prefix conformance failed"
fi
[[ -x "$NODE22" ]] || die "$NODE22 missing after install"
N22_VERSION="$("$NODE22" --version)"
[[ "$N22_VERSION" == v22.* ]] || die "conformance/node_modules/node is $N22_VERSION, expected v22.x"
MAIN_NODE_VERSION="$(node --version)"
log "suite runs on Node $N22_VERSION; server/client under test on Node $MAIN_NODE_VERSION ($(command -v node))"
[[ "$MAIN_NODE_VERSION" == v22.* ]] && log "warning: the main node on PATH is already 22.x; the code under test should run on the project's Node (20)"

# ---------------------------------------------------------------- helpers
SERVER_PGIDS=()
cleanup() {
  local pg
  for pg in "${SERVER_PGIDS[@]}"; do
    kill -TERM -- "-$pg" 2>/dev/null || true
  done
  if ((${#SERVER_PGIDS[@]})); then
    sleep 0.5
    for pg in "${SERVER_PGIDS[@]}"; do kill -KILL -- "-$pg" 2>/dev/null || true; done
  fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

free_port() {
  node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'
}

# start_server <label> <cmd-with-{port}>  -> sets STARTED_PORT, STARTED_PGID
start_server() {
  local label="$1" cmd="$2" port log_file deadline
  port="$(free_port)"
  cmd="${cmd//\{port\}/$port}"
  mkdir -p "$RESULTS_ROOT"
  log_file="$RESULTS_ROOT/server-$label.log"
  log "starting $label server: $cmd"
  # own session/process group, so the whole tree (npx -> tsx -> node) can be stopped
  setsid bash -c "exec $cmd" >"$log_file" 2>&1 </dev/null &
  local pid=$!
  SERVER_PGIDS+=("$pid")
  deadline=$((SECONDS + START_TIMEOUT))
  until (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; do
    if ! kill -0 "$pid" 2>/dev/null; then
      log "the $label server exited before listening; its log ($log_file):"
      tail -n 40 "$log_file" >&2 || true
      die "server did not start"
    fi
    if ((SECONDS >= deadline)); then
      log "the $label server did not accept connections on 127.0.0.1:$port within ${START_TIMEOUT}s; log:"
      tail -n 40 "$log_file" >&2 || true
      die "server start timed out"
    fi
    sleep 0.2
  done
  log "$label server listening on 127.0.0.1:$port (pgid $pid, log $log_file)"
  STARTED_PORT="$port"
  STARTED_PGID="$pid"
}

stop_server() {
  local pg="$1" i
  kill -TERM -- "-$pg" 2>/dev/null || true
  for i in $(seq 1 50); do kill -0 -- "-$pg" 2>/dev/null || break; sleep 0.1; done
  kill -KILL -- "-$pg" 2>/dev/null || true
  local keep=() p
  for p in "${SERVER_PGIDS[@]}"; do [[ "$p" == "$pg" ]] || keep+=("$p"); done
  SERVER_PGIDS=("${keep[@]+"${keep[@]}"}")
}

# Sets CLIENT_CMD when not given: a one-file bundle of examples/conformance-client.ts (same
# source, same esbuild transform as tsx; node builtins stay external, CommonJS deps get a
# `require`), else the tsx command.
prepare_client() {
  [[ -n "$CLIENT_CMD" ]] && return 0
  local esbuild="$REPO/node_modules/.bin/esbuild" out="$RESULTS_ROOT/.client/conformance-client.mjs"
  if [[ -x "$esbuild" ]] && mkdir -p "$(dirname "$out")" && "$esbuild" "$REPO/examples/conformance-client.ts" \
      --bundle --platform=node --format=esm --target=node20 --log-level=warning --outfile="$out" \
      "--banner:js=import { createRequire as __presaCreateRequire } from 'node:module'; const require = __presaCreateRequire(import.meta.url);" >&2; then
    CLIENT_CMD="node $out"
  else
    log "warning: could not bundle the client with $esbuild; using tsx (slower start)"
    CLIENT_CMD="$TSX_CLIENT_CMD"
  fi
  log "client command: $CLIENT_CMD"
}

NETNS_PREFIX=()
choose_netns() {
  if unshare -rn bash -c 'ip link set lo up 2>/dev/null || true; ip -o link show lo | grep -q "UP\|UNKNOWN"; (exec 3<>/dev/tcp/1.1.1.1/80) 2>/dev/null && exit 1; exit 0' 2>/dev/null; then
    NETNS_PREFIX=(unshare -rn bash -c 'ip link set lo up || exit 97; exec "$@"' conformance-netns)
    log "client suite runs in a private loopback-only network namespace (unshare -rn)"
  elif [[ "${CONFORMANCE_ALLOW_SHARED_NET:-}" == 1 ]]; then
    log "warning: unshare -rn unavailable; client scenario servers will listen on all interfaces"
  else
    log "error: unshare -rn is unavailable (the client suite's scenario servers listen on all interfaces); set CONFORMANCE_ALLOW_SHARED_NET=1 to run anyway"
    return 1
  fi
}

want_run() {
  local name="$1"
  [[ -z "${CONFORMANCE_RUNS:-}" ]] && return 0
  local r
  for r in ${CONFORMANCE_RUNS//,/ }; do [[ "$r" == "$name" ]] && return 0; done
  return 1
}

# run_suite <run-name> <suite-ver> <side> <url> <args-template>
# returns the suite's exit status (0 = conformant for that run)
run_suite() {
  local name="$1" ver="$2" side="$3" url="$4" spec="$5"
  local js out baseline rc=0 part args=() req=""
  [[ "$ver" == 0.1 ]] && js="$SUITE_01" || js="$SUITE_02"
  out="$RESULTS_ROOT/$name"
  rm -rf -- "$out"
  mkdir -p "$out"
  baseline="$EXPECTED_DIR/expected-failures-$name.yaml"
  [[ -f "$baseline" ]] || baseline=""
  local console_log="$out/console.log"
  : >"$console_log"
  log "=== $name (conformance $ver, $side) ==="
  IFS=';' read -r -a parts <<<"$spec"
  for part in "${parts[@]}"; do
    part="${part//\{url\}/$url}"
    if [[ -n "${CONFORMANCE_SCENARIO:-}" ]]; then
      # one scenario only: --requirements R => --spec-version R --scenario S; --suite X => --scenario S
      if [[ "$part" == *"--scenario "* && "$part" != *"--scenario $CONFORMANCE_SCENARIO"* ]]; then continue; fi
      # `|` as the sed delimiter: scenario names contain `/` (auth/…)
      part="$(sed -E -e "s|--requirements ([0-9-]+)|--spec-version \1 --scenario $CONFORMANCE_SCENARIO|" \
                     -e "s|--suite [a-z]+|--scenario $CONFORMANCE_SCENARIO|" <<<"$part")"
      [[ "$part" == *"--scenario $CONFORMANCE_SCENARIO --scenario"* ]] && part="${part/--scenario $CONFORMANCE_SCENARIO --scenario/--scenario}"
    fi
    read -r -a args <<<"$part"
    # {client} is one argument even though it contains spaces
    local i
    for i in "${!args[@]}"; do [[ "${args[$i]}" == "{client}" ]] && args[$i]="$CLIENT_CMD"; done
    if [[ "$part" =~ --requirements\ ([0-9-]+) ]]; then req="${BASH_REMATCH[1]}"; fi
    args+=(-o "$out")
    [[ -n "$baseline" ]] && args+=(--expected-failures "$baseline")
    local prefix=()
    [[ "$side" == client ]] && prefix=("${NETNS_PREFIX[@]}")
    local prc=0 tpid
    # `timeout` puts itself and the suite in a process group of their own (pgid = its
    # pid): the whole tree is killed when the bound is hit, and whatever a scenario
    # left behind (a client the suite only killed the shell of) is swept afterwards.
    timeout --kill-after=15 "$RUN_TIMEOUT" "${prefix[@]}" "$NODE22" "$js" "${args[@]}" >>"$console_log" 2>&1 &
    tpid=$!
    wait "$tpid" || prc=$?
    kill -KILL -- "-$tpid" 2>/dev/null || true
    if ((prc == 124 || prc == 137)); then
      log "$name: suite invocation timed out after ${RUN_TIMEOUT}s"
    fi
    ((prc != 0)) && rc=$prc
  done
  local sum_args=(--dir "$out" --side "$side" --suite "$ver" --name "$name")
  [[ -n "$baseline" ]] && sum_args+=(--baseline "$baseline")
  [[ -n "$req" ]] && sum_args+=(--requirements "$REQ_DIR/$req.yaml")
  node "$HERE/summarize.mjs" "${sum_args[@]}" --suite-exit "$rc" || true
  return "$rc"
}

# ---------------------------------------------------------------- main
declare -A RESULT=()
ORDER=()
overall=0

record() { RESULT["$1"]="$2"; ORDER+=("$1"); }

run_side() {
  local side="$1" instance url started_main="" started_skills="" main_url="" skills_url=""
  local r name ver s inst spec rc
  for r in "${RUNS[@]}"; do
    IFS='|' read -r name ver s inst spec <<<"$r"
    [[ "$s" == "$side" ]] || continue
    want_run "$name" || continue
    url=""
    if [[ "$side" == server ]]; then
      if [[ "$inst" == skills ]]; then
        if [[ -z "$SKILLS_SERVER_CMD" ]]; then
          log "skipping $name: no skills server command (CONFORMANCE_SKILLS_SERVER_CMD)"
          record "$name" "skipped"
          continue
        fi
        if [[ -z "$started_skills" ]]; then
          start_server skills "$SKILLS_SERVER_CMD"
          started_skills="$STARTED_PGID"; skills_url="http://127.0.0.1:$STARTED_PORT/mcp"
        fi
        url="$skills_url"
      else
        if [[ -z "$started_main" ]]; then
          start_server main "$SERVER_CMD"
          started_main="$STARTED_PGID"; main_url="http://127.0.0.1:$STARTED_PORT/mcp"
        fi
        url="$main_url"
      fi
    fi
    rc=0
    run_suite "$name" "$ver" "$side" "$url" "$spec" || rc=$?
    local rerun=""
    if ((rc != 0)) && [[ "$side" == client && -z "${CONFORMANCE_SCENARIO:-}" ]]; then
      # The suite starts every client scenario of a run at once (dozens of clients on a
      # 2-core CI machine); a scenario can then miss its deadline or see a connection fail.
      # Up to MAX_RERUN scenarios that failed there are re-run, each alone; the run passes
      # only if each passes alone, and the summary names them. More failures: no re-run.
      local failed=() f again=0
      mapfile -t failed < <(node "$HERE/failed-scenarios.mjs" "$RESULTS_ROOT/$name" "$EXPECTED_DIR/expected-failures-$name.yaml" | sed '/^$/d')
      if ((${#failed[@]} > 0 && ${#failed[@]} <= MAX_RERUN)); then
        log "$name: ${#failed[*]} scenario(s) failed in the parallel run (${failed[*]}): re-running each alone"
        for f in "${failed[@]}"; do
          CONFORMANCE_SCENARIO="$f" run_suite "$name.rerun.${f//\//_}" "$ver" "$side" "$url" "$spec" || again=1
        done
        if ((again == 0)); then rc=0; rerun=" (passed alone after failing in the parallel run: ${failed[*]})"; fi
      fi
    fi
    if ((rc == 0)); then record "$name" "ok$rerun"; else record "$name" "FAILED (exit $rc)"; overall=1; fi
  done
  [[ -n "$started_main" ]] && stop_server "$started_main"
  [[ -n "$started_skills" ]] && stop_server "$started_skills"
  return 0
}

mkdir -p "$RESULTS_ROOT"
if [[ "$SIDE" == server || "$SIDE" == all ]]; then run_side server; fi
if [[ "$SIDE" == client || "$SIDE" == all ]]; then
  any_client=""
  for r in "${RUNS[@]}"; do IFS='|' read -r name _ s _ _ <<<"$r"; [[ "$s" == client ]] && want_run "$name" && any_client=1; done
  if [[ -n "$any_client" ]]; then
    if choose_netns; then
      prepare_client
      run_side client
    else
      for r in "${RUNS[@]}"; do
        IFS='|' read -r name _ s _ _ <<<"$r"
        [[ "$s" == client ]] && want_run "$name" && record "$name" "FAILED (no private network namespace)"
      done
      overall=1
    fi
  fi
fi

echo
echo "=== conformance runs ==="
if ((${#ORDER[@]} == 0)); then
  echo "(no run selected)"; exit 2
fi
for name in "${ORDER[@]}"; do printf '  %-34s %s\n' "$name" "${RESULT[$name]}"; done
echo "results: $RESULTS_ROOT"
exit "$overall"
