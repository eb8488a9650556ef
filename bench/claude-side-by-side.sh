#!/usr/bin/env bash
# Side by side with Claude Code (SPEC §14; issue 4). Not part of CI.
#
# Serves one generated marketplace (N relative plugins, each with a skill and
# a command) from the fake GitHub on loopback, then times and counts the
# fake's requests for
#   Claude Code:  claude plugin marketplace add http://127.0.0.1:PORT/acme/market.git
#                 + claude plugin install pK@acme-market   (K = 1..N)
#   reasonix:     reasonix plugin install https://github.com/acme/market --yes
# and, where each tool can, a warm re-install (caches kept, plugins removed
# first, removal not timed) and, for reasonix, an --offline re-install.
#
# Claude Code is installed from npm into a throwaway directory and runs with a
# throwaway HOME, no login, DISABLE_TELEMETRY=1,
# CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 and DISABLE_AUTOUPDATER=1.
# Nothing here talks to github.com: reasonix is pointed at the fake with
# REASONIX_GITHUB_URL / REASONIX_GITHUB_API_URL, Claude Code gets the fake's
# git URL. Request counts come from the fake's access log.
# Even with those variables, `claude plugin install` probes its API host
# (`HEAD /` on api.anthropic.com, after a DNS lookup); ANTHROPIC_BASE_URL
# points that probe at a closed loopback port so the run stays on loopback.
# Claude runs in a throwaway project directory, so no project settings apply.
# Claude Code has no bulk install, so its side is one process per plugin;
# that per-process cost is part of what is measured.
#
# Usage: bench/claude-side-by-side.sh [options]
#   -n, --plugins N        plugins in the marketplace (default 20; env SIDEBYSIDE_PLUGINS)
#   --claude-bin PATH      use this claude instead of installing one from npm
#                          (env SIDEBYSIDE_CLAUDE_BIN)
#   --claude-pkg SPEC      npm package to install (default @anthropic-ai/claude-code;
#                          env SIDEBYSIDE_CLAUDE_PKG), e.g. @anthropic-ai/claude-code@2.1.197
#   --no-claude            only the reasonix side
#   --wait-minutes M       if reasonix cannot plan the marketplace yet, re-build it and
#                          retry `--dry-run` every 5 minutes for up to M minutes
#                          (default 0; env SIDEBYSIDE_WAIT_MINUTES)
#   --timeout S            per-command timeout in seconds (default 300)
#   --keep                 keep the work directory (printed at the end)
#
# Real marketplaces (issue 12): instead of a generated marketplace, serve real
# git repositories through the fake with their real history (fakegithub
# -bare), install every entry of one of them with both tools, and compare the
# installed trees file by file (bench/sidebyside compare):
#   --real OWNER/NAME      the marketplace repository (must be served: --bare or --mirrors)
#   --bare OWNER/NAME=GITDIR  serve this git repository (repeatable)
#   --mirrors DIR          serve every DIR/OWNER+NAME/repo (or DIR/OWNER+NAME) git directory
#   --out FILE             also write the comparison report to FILE
#   --no-netns             do not run in a network namespace of its own
#   --claude-all           let Claude try every entry, also those whose repository
#                          is not served (by default it tries relative entries and
#                          those of served repositories only: each claude process
#                          takes seconds, and an unserved one is a 404 on both sides)
#   --only NAME,NAME       Claude tries only these entries (the report still lists all)
#   --reasonix-flag FLAG   pass FLAG to reasonix's install too, e.g. --allow-unpinned (repeatable)
# Claude adds the marketplace as OWNER/NAME and installs each entry with
# `claude plugin install ENTRY@MARKET`; its throwaway HOME's .gitconfig
# rewrites https://github.com/ (and the ssh forms) to the fake. reasonix runs
# `reasonix plugin install https://github.com/OWNER/NAME --yes` once. The
# whole run happens in a fresh network namespace (unshare -rn) whose only
# interface is loopback, so neither tool can reach anything but the fake;
# what each asked for is in the fake's access log. Entries whose repository
# is not served fail the same way on both sides (the fake answers 404).
# The fake serves any object by SHA there (-serve-any-wants), as GitHub does:
# Claude's partial clones of git-subdir repositories fetch trees that way.
#
# Parity goldens (issue 22): with --goldens, only Claude runs. After
# `marketplace add` and one `install` per entry as above, it runs
# `claude plugin details ENTRY@MARKET` for each entry it installed and
# `claude plugin list --json` once, and writes one golden per entry into
# DIR (bench/sidebyside goldens; internal/parity): Claude's inventory, its
# verdict and the commands that produced them. Names and verdicts only, never
# a plugin's content, so goldens of real marketplaces can be committed. It
# never runs `claude --debug`: that starts a session, which runs plugins'
# SessionStart hooks and MCP servers. Only --session starts one, and only
# with --local (the fixture, whose plugins are ours).
#   --goldens DIR          record goldens into DIR (Claude only; with --real or --local)
#   --local DIR            the marketplace is this local folder, added as a path;
#                          its remote entries go to the fake when --bare/--mirrors serve them
#   --source-label TEXT    how the goldens name the marketplace's source (default:
#                          OWNER/NAME@COMMIT served, or the --local folder)
#   --harness-label TEXT   how the goldens name the command that recorded them
#                          (default: this script's command line)
#   --session              with --local: after the installs, start one session
#                          (`claude -p --output-format stream-json --verbose`,
#                          the API unreachable) and record what its init message
#                          says each plugin loaded: agents and commands by the
#                          names sessions give them, nested folders included,
#                          which details does not show
# Exit status: 0 when both sides installed every plugin, 1 otherwise (the
# table is printed either way), 2 on usage errors. With --goldens: 0 when
# every golden was written.
set -euo pipefail
ORIG_ARGS=("$@")

usage() { sed -n '/^# Usage:/,/^# Exit status/p' "$0" | sed 's/^# \{0,1\}//'; exit "${1:-0}"; }

N=${SIDEBYSIDE_PLUGINS:-20}
CLAUDE_BIN=${SIDEBYSIDE_CLAUDE_BIN:-}
CLAUDE_PKG=${SIDEBYSIDE_CLAUDE_PKG:-@anthropic-ai/claude-code}
WAIT_MIN=${SIDEBYSIDE_WAIT_MINUTES:-0}
CMD_TIMEOUT=300
WAIT_STEP=${SIDEBYSIDE_WAIT_STEP:-300} # seconds between --wait-minutes retries
KEEP=0
SKIP_CLAUDE=0
REAL= MIRRORS= OUT= NETNS=1 CLAUDE_ALL=0 ONLY= GOLDENS= LOCAL= SOURCE_LABEL= HARNESS_LABEL= SESSION=0
BARES=() RX_FLAGS=()
while [ $# -gt 0 ]; do
  case "$1" in
    -n|--plugins) N=${2:?}; shift 2 ;;
    --claude-bin) CLAUDE_BIN=${2:?}; shift 2 ;;
    --claude-pkg) CLAUDE_PKG=${2:?}; shift 2 ;;
    --no-claude) SKIP_CLAUDE=1; shift ;;
    --wait-minutes) WAIT_MIN=${2:?}; shift 2 ;;
    --timeout) CMD_TIMEOUT=${2:?}; shift 2 ;;
    --keep) KEEP=1; shift ;;
    --real) REAL=${2:?}; shift 2 ;;
    --bare) BARES+=("${2:?}"); shift 2 ;;
    --mirrors) MIRRORS=${2:?}; shift 2 ;;
    --out) OUT=${2:?}; shift 2 ;;
    --no-netns) NETNS=0; shift ;;
    --claude-all) CLAUDE_ALL=1; shift ;;
    --only) ONLY=${2:?}; shift 2 ;;
    --reasonix-flag) RX_FLAGS+=("${2:?}"); shift 2 ;;
    --goldens) GOLDENS=${2:?}; shift 2 ;;
    --local) LOCAL=${2:?}; shift 2 ;;
    --source-label) SOURCE_LABEL=${2:?}; shift 2 ;;
    --harness-label) HARNESS_LABEL=${2:?}; shift 2 ;;
    --session) SESSION=1; shift ;;
    -h|--help) usage 0 ;;
    *) echo "unknown argument: $1" >&2; usage 2 >&2 ;;
  esac
done
case "$N" in ''|*[!0-9]*) echo "-n wants a number, got '$N'" >&2; exit 2 ;; esac
if [ "$N" -lt 1 ] || [ "$N" -gt 1000 ]; then echo "-n wants 1..1000, got $N" >&2; exit 2; fi
case "$WAIT_MIN" in ''|*[!0-9]*) echo "--wait-minutes wants a number" >&2; exit 2 ;; esac

say() { printf '== %s\n' "$*" >&2; }
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }

REPO_ROOT=$(cd "$(dirname "$0")/.." && pwd)
SIDEBYSIDE_BIN_DIR=${SIDEBYSIDE_BIN_DIR:-}

build() {
  (cd "$REPO_ROOT" &&
    CGO_ENABLED=0 go build -o "$BIN/reasonix" ./cmd/reasonix &&
    go build -o "$BIN/fakegithub" ./internal/fakegithub/cmd/fakegithub &&
    go build -o "$BIN/sidebyside" ./bench/sidebyside)
}

case "$REAL" in ''|*/*) ;; *) echo "--real wants OWNER/NAME, got '$REAL'" >&2; exit 2 ;; esac
if [ -n "$REAL" ] && [ -n "$LOCAL" ]; then echo "--real and --local exclude each other" >&2; exit 2; fi
if [ -z "$REAL$LOCAL" ] && { [ "${#BARES[@]}" -gt 0 ] || [ -n "$MIRRORS" ]; }; then
  echo "--bare and --mirrors go with --real or --local" >&2; exit 2
fi
if [ -n "$GOLDENS" ] && [ -z "$REAL$LOCAL" ]; then echo "--goldens goes with --real or --local" >&2; exit 2; fi
if [ -n "$LOCAL" ] && [ -z "$GOLDENS" ]; then echo "--local goes with --goldens" >&2; exit 2; fi
if [ "$SESSION" = 1 ] && [ -z "$LOCAL" ]; then
  echo "--session goes with --local: a session runs the installed plugins' hooks and MCP servers" >&2; exit 2
fi
if [ -n "$LOCAL" ]; then
  [ -f "$LOCAL/.claude-plugin/marketplace.json" ] || { echo "--local $LOCAL: no .claude-plugin/marketplace.json there" >&2; exit 2; }
  LOCAL=$(cd "$LOCAL" && pwd)
fi
[ -z "$GOLDENS" ] || GOLDENS=$(realpath -m "$GOLDENS") # made when a golden is written
# --real and --local run inside a network namespace whose only interface is
# loopback: build first (go may need the network), then re-run this script in there.
if [ -n "$REAL$LOCAL" ] && [ "$NETNS" = 1 ] && [ -z "${SIDEBYSIDE_IN_NETNS:-}" ]; then
  if ! command -v ip >/dev/null || ! unshare -rn true 2>/dev/null; then
    echo "--real and --local run in a network namespace of its own (unshare -rn, ip) and this machine cannot make one; --no-netns runs without one" >&2
    exit 1
  fi
  BIN=$(mktemp -d "${TMPDIR:-/tmp}/reasonix-sidebyside-bin.XXXXXX")
  say "building reasonix, fakegithub and bench/sidebyside from $REPO_ROOT"
  build || { rm -rf "$BIN"; exit 1; }
  say "re-running in a network namespace with only loopback (unshare -rn)"
  rc=0
  SIDEBYSIDE_IN_NETNS=1 SIDEBYSIDE_BIN_DIR=$BIN unshare -rn bash -c 'ip link set lo up && exec bash "$0" "$@"' "$0" "${ORIG_ARGS[@]}" || rc=$?
  rm -rf "$BIN"
  exit "$rc"
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/reasonix-sidebyside.XXXXXX")
BIN=$WORK/bin
FAKE_LOG=$WORK/fake.log
FAKE_PID= FAKE_URL=
MKT=acme-market

cleanup() {
  local rc=$?
  if [ -n "$FAKE_PID" ] && kill -0 "$FAKE_PID" 2>/dev/null; then
    kill "$FAKE_PID" 2>/dev/null || true
    wait "$FAKE_PID" 2>/dev/null || true
  fi
  if [ "$KEEP" = 1 ]; then
    say "work directory kept: $WORK"
  else
    rm -rf "$WORK"
  fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

if [ -n "$SIDEBYSIDE_BIN_DIR" ]; then
  BIN=$SIDEBYSIDE_BIN_DIR # built before entering the network namespace
else
  say "building reasonix, fakegithub and bench/sidebyside from $REPO_ROOT"
  build
fi

# start_fake ARGS...: the fake GitHub on loopback with ARGS (its -repo/-bare
# flags); sets FAKE_URL and FAKE_API.
start_fake() {
  mkdir -p "$WORK/fake"
  "$BIN/fakegithub" -addr 127.0.0.1:0 -dir "$WORK/fake" "$@" >"$WORK/fake.env" 2>"$FAKE_LOG" &
  FAKE_PID=$!
  for _ in $(seq 1 1200); do
    grep -q '^fakegithub: listening on ' "$WORK/fake.env" 2>/dev/null && break
    if ! kill -0 "$FAKE_PID" 2>/dev/null; then
      echo "fakegithub exited:" >&2; cat "$FAKE_LOG" >&2; exit 1
    fi
    sleep 0.05
  done
  FAKE_URL=$(sed -n 's/^export REASONIX_GITHUB_URL=//p' "$WORK/fake.env")
  FAKE_API=$(sed -n 's/^export REASONIX_GITHUB_API_URL=//p' "$WORK/fake.env")
  [ -n "$FAKE_URL" ] || { echo "fakegithub printed no URL:" >&2; cat "$FAKE_LOG" >&2; exit 1; }
  case "$FAKE_URL" in http://127.*|http://localhost:*) ;; *) echo "fake is not on loopback: $FAKE_URL" >&2; exit 1 ;; esac
}

if [ -z "$REAL$LOCAL" ]; then
  say "generating a marketplace of $N plugins"
  "$BIN/sidebyside" gen -n "$N" -name "$MKT" -out "$WORK/market"
  say "starting the fake GitHub on loopback"
  start_fake -repo "acme/market=$WORK/market"
  GIT_URL=$FAKE_URL/acme/market.git
  RX_SOURCE=https://github.com/acme/market
  say "fake GitHub at $FAKE_URL (git: $GIT_URL)"
fi

# Counting: "reset" is remembering the log's length; a request is logged when
# its response is done, so let the log settle before reading it.
# Without a fake (a --local marketplace alone) there is nothing to count.
mark() { if [ -f "$FAKE_LOG" ]; then wc -l <"$FAKE_LOG" | tr -d ' '; else echo 0; fi; }
settle() {
  local a b
  a=$(mark)
  while sleep 0.2; b=$(mark); [ "$a" != "$b" ]; do a=$b; done
}
counts_since() { [ -f "$FAKE_LOG" ] || return 0; settle; "$BIN/sidebyside" counts -log "$FAKE_LOG" -from "$1"; }
cval() { printf '%s\n' "$2" | tr ' ' '\n' | sed -n "s/^$1=//p"; }

# Table rows.
ROW_NAME=() ROW_MS=() ROW_COUNTS=() ROW_INST=() ROW_NOTE=()
add_row() { ROW_NAME+=("$1") ROW_MS+=("$2") ROW_COUNTS+=("$3") ROW_INST+=("$4") ROW_NOTE+=("$5"); }
NOTES=()
note() { NOTES+=("$*"); say "$*"; }

# ---------------------------------------------------------------- Claude Code
CLAUDE=()
CLAUDE_VERSION=
CLAUDE_HOME=$WORK/claude-home
CLAUDE_OK=0
CLAUDE_PROBLEM=

CLAUDE_API_SINK=http://127.0.0.1:9
run_claude() (
  mkdir -p "$CLAUDE_HOME/project"
  cd "$CLAUDE_HOME/project"
  exec env -u ANTHROPIC_API_KEY -u ANTHROPIC_AUTH_TOKEN -u CLAUDE_CODE_OAUTH_TOKEN \
    HOME="$CLAUDE_HOME" CLAUDE_CONFIG_DIR="$CLAUDE_HOME/.claude" \
    XDG_CONFIG_HOME="$CLAUDE_HOME/.config" XDG_CACHE_HOME="$CLAUDE_HOME/.cache" \
    XDG_DATA_HOME="$CLAUDE_HOME/.local/share" XDG_STATE_HOME="$CLAUDE_HOME/.local/state" \
    DISABLE_TELEMETRY=1 CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 DISABLE_AUTOUPDATER=1 \
    DISABLE_ERROR_REPORTING=1 GIT_TERMINAL_PROMPT=0 ANTHROPIC_BASE_URL="$CLAUDE_API_SINK" \
    timeout "$CMD_TIMEOUT" "${CLAUDE[@]}" "$@" </dev/null
)

# try_claude CMD...: use CMD if `CMD --version` says it is Claude Code.
try_claude() {
  local out
  CLAUDE=("$@")
  if out=$(run_claude --version 2>&1) && printf '%s' "$out" | grep -q 'Claude Code'; then
    CLAUDE_VERSION=$(printf '%s\n' "$out" | head -n 1)
    return 0
  fi
  say "  not usable: $* --version -> $(printf '%s' "$out" | head -n 2 | tr '\n' ' ')"
  CLAUDE=()
  return 1
}

claude_setup() {
  mkdir -p "$CLAUDE_HOME"
  if [ -n "$CLAUDE_BIN" ]; then
    try_claude "$CLAUDE_BIN" && return 0
    CLAUDE_PROBLEM="--claude-bin $CLAUDE_BIN does not run (\`$CLAUDE_BIN --version\` failed)"
    return 1
  fi
  if ! command -v npm >/dev/null; then
    CLAUDE_PROBLEM="npm is not installed, so Claude Code cannot be installed"
    return 1
  fi
  local dir=$WORK/claude t0
  say "installing $CLAUDE_PKG from npm into $dir"
  t0=$(now_ms)
  if ! timeout "$CMD_TIMEOUT" npm install --prefix "$dir" --no-audit --no-fund "$CLAUDE_PKG" >"$WORK/npm.log" 2>&1; then
    CLAUDE_PROBLEM="npm install --prefix $dir $CLAUDE_PKG failed: $(grep -i 'err' "$WORK/npm.log" | head -n 3 | tr '\n' ' ')"
    return 1
  fi
  say "  npm install took $(( $(now_ms) - t0 )) ms"
  # The package's bin is a native binary that its postinstall copies in
  # (newer releases), or cli.js run by node (older ones). Try what is there.
  local pkg=$dir/node_modules/@anthropic-ai/claude-code cand
  for cand in "$dir/node_modules/.bin/claude" "$pkg/bin/claude.exe" \
    "$dir"/node_modules/@anthropic-ai/claude-code-linux-*/claude; do
    [ -x "$cand" ] || continue
    say "  trying $cand"
    try_claude "$cand" && return 0
  done
  for cand in "$pkg/cli-wrapper.cjs" "$pkg/cli.js"; do
    [ -f "$cand" ] || continue
    say "  trying node $cand"
    try_claude node "$cand" && return 0
  done
  CLAUDE_PROBLEM="$CLAUDE_PKG installed but no claude entry point runs here (see the 'not usable' lines above; npm log: $WORK/npm.log)"
  return 1
}

claude_installed() {
  local out
  if out=$(run_claude plugin list --json 2>/dev/null); then
    printf '%s' "$out" | "$BIN/sidebyside" len . 2>/dev/null || echo "?"
  else
    echo "?"
  fi
}

# claude_install_all LOG: installs p1..pN; sets INST_OK and INST_FAIL_MSG.
claude_install_all() {
  local i out
  INST_OK=0 INST_FAIL_MSG=
  for i in $(seq 1 "$N"); do
    if out=$(run_claude plugin install "p$i@$MKT" 2>&1); then
      INST_OK=$((INST_OK + 1))
    elif [ -z "$INST_FAIL_MSG" ]; then
      INST_FAIL_MSG="install p$i@$MKT: $(printf '%s' "$out" | tail -n 2 | tr '\n' ' ')"
    fi
    printf '%s\n' "$out" >>"$1"
  done
}

claude_side() {
  if [ "$SKIP_CLAUDE" = 1 ]; then
    note "Claude Code: skipped (--no-claude)"
    return 0
  fi
  if ! claude_setup; then
    note "Claude Code: NOT RUN: $CLAUDE_PROBLEM"
    add_row "claude code: add + install (cold)" "-" "" "-" "not run: see notes"
    return 0
  fi
  say "Claude Code: $CLAUDE_VERSION (${CLAUDE[*]})"

  local m t0 t1 t2 out c inst
  say "Claude Code: marketplace add $GIT_URL, then install p1..p$N@$MKT"
  m=$(mark); t0=$(now_ms)
  if ! out=$(run_claude plugin marketplace add "$GIT_URL" 2>&1); then
    t1=$(now_ms)
    c=$(counts_since "$m")
    note "Claude Code: \`claude plugin marketplace add $GIT_URL\` FAILED after $((t1 - t0)) ms: $(printf '%s' "$out" | tail -n 3 | tr '\n' ' ')"
    add_row "claude code: add + install (cold)" "$((t1 - t0))" "$c" "0" "marketplace add failed"
    return 0
  fi
  t1=$(now_ms)
  claude_install_all "$WORK/claude-install.log"
  t2=$(now_ms)
  c=$(counts_since "$m")
  inst=$(claude_installed)
  local n1="add $((t1 - t0)) ms + $N installs $((t2 - t1)) ms"
  if [ "$INST_OK" != "$N" ]; then
    note "Claude Code: only $INST_OK of $N installs succeeded; first failure: $INST_FAIL_MSG"
    n1="$n1; $((N - INST_OK)) installs FAILED"
  fi
  add_row "claude code: add + install (cold)" "$((t2 - t0))" "$c" "$inst" "$n1"
  [ "$INST_OK" = "$N" ] && [ "$inst" = "$N" ] && CLAUDE_OK=1

  # Warm: the marketplace stays added and cached; uninstall (not timed), re-install.
  say "Claude Code: uninstall all, re-install from the added marketplace (warm)"
  local i
  for i in $(seq 1 "$N"); do
    run_claude plugin uninstall "p$i@$MKT" >>"$WORK/claude-uninstall.log" 2>&1 || true
  done
  inst=$(claude_installed)
  if [ "$inst" != 0 ]; then
    note "Claude Code: $inst plugins still listed after uninstalling all; warm row re-installs over them"
  fi
  m=$(mark); t0=$(now_ms)
  claude_install_all "$WORK/claude-reinstall.log"
  t1=$(now_ms)
  c=$(counts_since "$m")
  inst=$(claude_installed)
  local n2="$N installs, marketplace already added"
  [ "$INST_OK" = "$N" ] || n2="$n2; $((N - INST_OK)) installs FAILED: $INST_FAIL_MSG"
  add_row "claude code: re-install (warm)" "$((t1 - t0))" "$c" "$inst" "$n2"
}

# ------------------------------------------------------------------- reasonix
RX_OK=0

rx() {
  local home=$1
  shift
  env -u REASONIX_OFFLINE -u REASONIX_GIT -u GITHUB_TOKEN -u GH_TOKEN \
    REASONIX_HOME="$home" REASONIX_GITHUB_URL="$FAKE_URL" REASONIX_GITHUB_API_URL="$FAKE_API" \
    timeout "$CMD_TIMEOUT" "$BIN/reasonix" "$@" </dev/null
}

rx_installed() {
  local out
  if out=$(rx "$1" plugin list --json 2>/dev/null); then
    printf '%s' "$out" | "$BIN/sidebyside" len plugins 2>/dev/null || echo "?"
  else
    echo "?"
  fi
}

# rx_probe: can this reasonix plan the marketplace? (a home of its own, so
# the timed cold run below stays cold)
rx_probe() {
  local home=$WORK/rx-probe out
  rm -rf "$home"
  out=$(rx "$home" plugin install "$RX_SOURCE" --dry-run 2>"$WORK/rx-probe.err") || true
  rm -rf "$home"
  RX_PROBE=$(printf '%s' "$out" | "$BIN/sidebyside" response)
  case "$RX_PROBE" in ok=true*) return 0 ;; esac
  [ -s "$WORK/rx-probe.err" ] && RX_PROBE="$RX_PROBE stderr: $(head -n 3 "$WORK/rx-probe.err" | tr '\n' ' ')"
  return 1
}

rx_wait() {
  [ "$WAIT_MIN" -gt 0 ] || return 0
  local waited=0
  until rx_probe; do
    if [ "$waited" -ge "$WAIT_MIN" ]; then
      say "reasonix still cannot plan the marketplace after waiting $waited minutes"
      return 0
    fi
    say "reasonix cannot plan the marketplace yet ($RX_PROBE); waiting ${WAIT_STEP}s ($waited of $WAIT_MIN minutes so far)"
    sleep "$WAIT_STEP"
    waited=$((waited + (WAIT_STEP + 59) / 60))
    say "re-building reasonix"
    if ! (cd "$REPO_ROOT" && CGO_ENABLED=0 go build -o "$BIN/reasonix.new" ./cmd/reasonix); then
      say "  build failed (work in progress?); keeping the previous binary"
    else
      mv "$BIN/reasonix.new" "$BIN/reasonix"
    fi
  done
  say "reasonix plans the marketplace: $RX_PROBE"
}

# rx_timed LABEL SLUG HOME ARGS...: one timed install, one table row; the
# response is kept as rx-SLUG.json.
rx_timed() {
  local label=$1 slug=$2 home=$3 m t0 t1 c out summary inst rc=0
  shift 3
  m=$(mark); t0=$(now_ms)
  out=$(rx "$home" plugin install "$RX_SOURCE" "$@" 2>"$WORK/rx.err") || rc=$?
  t1=$(now_ms)
  c=$(counts_since "$m")
  printf '%s\n' "$out" >"$WORK/rx-$slug.json"
  summary=$(printf '%s' "$out" | "$BIN/sidebyside" response)
  inst=$(rx_installed "$home")
  RX_LAST_OK=0
  if [ "$rc" = 0 ] && [ "${summary#ok=true}" != "$summary" ]; then
    RX_LAST_OK=1
    add_row "reasonix: $label" "$((t1 - t0))" "$c" "$inst" \
      "$(cval status "$summary"), $(cval actions "$summary") actions ($(cval by_status "$summary"))"
  else
    note "reasonix: \`reasonix plugin install $RX_SOURCE $*\` FAILED (exit $rc): $summary$( [ -s "$WORK/rx.err" ] && printf ' stderr: %s' "$(head -n 3 "$WORK/rx.err" | tr '\n' ' ')")"
    add_row "reasonix: $label" "$((t1 - t0))" "$c" "$inst" "FAILED exit $rc: $(cval errorCode "$summary") (see notes)"
  fi
}

rx_remove_all() {
  local home=$1 i
  for i in $(seq 1 "$N"); do
    rx "$home" plugin remove "p$i" --yes >>"$WORK/rx-remove.log" 2>&1 || true
  done
  local left
  left=$(rx_installed "$home")
  [ "$left" = 0 ] || note "reasonix: $left plugins still listed after removing p1..p$N"
}

reasonix_side() {
  local home=$WORK/rx
  rx_wait
  say "reasonix: plugin install $RX_SOURCE --yes (cold home $home)"
  rx_timed "install --yes (cold)" cold "$home" --yes
  if [ "$RX_LAST_OK" != 1 ]; then
    note "reasonix: warm and offline re-runs skipped because the cold install failed"
    return 0
  fi
  [ "$(rx_installed "$home")" = "$N" ] && RX_OK=1
  say "reasonix: remove all (not timed), install --yes again (warm cache)"
  rx_remove_all "$home"
  rx_timed "re-install --yes (warm)" warm "$home" --yes
  say "reasonix: remove all (not timed), install --yes --offline"
  rx_remove_all "$home"
  rx_timed "re-install --yes --offline" offline "$home" --yes --offline
}

# ------------------------------------------------------- real marketplaces
# real_main: serve the --bare/--mirrors repositories, install every entry of
# the --real marketplace with both tools, compare (see Usage).
real_main() {
  local args=() b d p g real_gitdir= t0 t1 m names name rc out n_ok=0 n_all=0 i
  for b in "${BARES[@]}"; do args+=(-bare "$b"); done
  if [ -n "$MIRRORS" ]; then
    for d in "$MIRRORS"/*+*; do
      [ -d "$d" ] || continue
      p=$(basename "$d"); p=${p/+//}
      g=$d; [ -d "$d/repo" ] && g=$d/repo
      git --git-dir="$g" rev-parse --verify -q HEAD >/dev/null 2>&1 || { say "skipping $d: not a git repository with a HEAD"; continue; }
      args+=(-bare "$p=$g")
    done
  fi
  # ADD_SRC is what Claude adds; MKT_SOURCE is how a golden names it.
  local ADD_SRC MKT_SOURCE
  if [ -n "$LOCAL" ]; then
    cp "$LOCAL/.claude-plugin/marketplace.json" "$WORK/marketplace.json"
    ADD_SRC=$LOCAL
    MKT_SOURCE=$(realpath --relative-to="$REPO_ROOT" "$LOCAL")
    case "$MKT_SOURCE" in ../*) MKT_SOURCE=$LOCAL ;; esac
  else
    for ((i = 0; i < ${#args[@]}; i += 2)); do
      b=${args[i+1]}
      [ "${b%%=*}" = "$REAL" ] && real_gitdir=${b#*=}
    done
    [ -n "$real_gitdir" ] || { echo "--real $REAL is not among the served repositories (--bare/--mirrors)" >&2; exit 2; }
    git -C "$real_gitdir" show HEAD:.claude-plugin/marketplace.json >"$WORK/marketplace.json" ||
      { echo "$real_gitdir has no .claude-plugin/marketplace.json at HEAD" >&2; exit 1; }
    ADD_SRC=$REAL
    MKT_SOURCE=$REAL@$(git -C "$real_gitdir" rev-parse HEAD)
  fi
  [ -z "$SOURCE_LABEL" ] || MKT_SOURCE=$SOURCE_LABEL
  MKT=$("$BIN/sidebyside" names -market "$WORK/marketplace.json")
  names=$("$BIN/sidebyside" names "$WORK/marketplace.json")
  local served=() tried
  for ((i = 0; i < ${#args[@]}; i += 2)); do served+=("${args[i+1]%%=*}"); done
  if [ "$CLAUDE_ALL" = 1 ]; then
    tried=$names
  else
    # Nothing served (a --local marketplace alone): relative entries only.
    [ "${#served[@]}" -gt 0 ] || served=(-)
    tried=$("$BIN/sidebyside" names -served "$(IFS=,; echo "${served[*]}")" "$WORK/marketplace.json")
  fi
  # A lookup table, not `printf | grep -q`: under pipefail grep's early exit
  # can fail the pipeline with SIGPIPE and drop an entry.
  local -A is_tried=()
  while IFS= read -r name; do [ -z "$name" ] || is_tried[$name]=1; done <<<"$tried"
  if [ -n "$ONLY" ]; then
    local -A only=()
    for name in ${ONLY//,/ }; do only[$name]=1; done
    for name in "${!is_tried[@]}"; do [ -n "${only[$name]:-}" ] || unset "is_tried[$name]"; done
  fi
  if [ "${#args[@]}" -gt 0 ]; then
    say "serving $(( ${#args[@]} / 2 )) repositories through the fake (copying their history)"
    t0=$(now_ms)
    # Claude clones a git-subdir entry's repository partially and fetches its
    # trees and blobs by SHA afterwards, which GitHub serves.
    start_fake -serve-any-wants "${args[@]}"
    say "fake GitHub at $FAKE_URL after $(( $(now_ms) - t0 )) ms"
  fi
  say "marketplace $MKT, $(printf '%s\n' "$names" | wc -l) entries"

  local claude_ms=- rx_ms=- claude_counts= rx_counts=
  mkdir -p "$WORK/claude-logs"
  if [ "$SKIP_CLAUDE" = 1 ]; then
    note "Claude Code: skipped (--no-claude)"
  elif ! claude_setup; then
    note "Claude Code: NOT RUN: $CLAUDE_PROBLEM"
  else
    # Every github.com URL Claude's git uses goes to the fake instead.
    if [ -n "$FAKE_URL" ]; then
      cat >"$CLAUDE_HOME/.gitconfig" <<EOF
[url "$FAKE_URL/"]
	insteadOf = https://github.com/
	insteadOf = git@github.com:
	insteadOf = ssh://git@github.com/
EOF
    fi
    say "Claude Code: $CLAUDE_VERSION: marketplace add $ADD_SRC, then one install per entry"
    m=$(mark); t0=$(now_ms)
    if ! out=$(run_claude plugin marketplace add "$ADD_SRC" 2>&1); then
      note "Claude Code: \`claude plugin marketplace add $ADD_SRC\` FAILED: $(printf '%s' "$out" | tail -n 3 | tr '\n' ' ')"
      [ -z "$GOLDENS" ] || { echo "no goldens: marketplace add failed: $out" >&2; exit 1; }
    else
      while IFS= read -r name; do
        [ -n "$name" ] || continue
        if [ -z "${is_tried[$name]:-}" ]; then
          if [ -n "$ONLY" ]; then
            echo "not tried: not in --only" >"$WORK/claude-logs/$name.log"
          else
            echo "not tried: the entry's repository is not served by the fake (--claude-all tries it)" >"$WORK/claude-logs/$name.log"
          fi
          continue
        fi
        n_all=$((n_all + 1))
        rc=0
        run_claude plugin install "$name@$MKT" >"$WORK/claude-logs/$name.log" 2>&1 || rc=$?
        echo "$rc" >"$WORK/claude-logs/$name.rc"
        [ "$rc" = 0 ] && n_ok=$((n_ok + 1))
        if [ -n "$GOLDENS" ] && [ "$rc" = 0 ]; then
          rc=0
          run_claude plugin details "$name@$MKT" >"$WORK/claude-logs/$name.details" 2>&1 || rc=$?
          echo "$rc" >"$WORK/claude-logs/$name.details.rc"
        fi
        [ $((n_all % 25)) != 0 ] || say "  claude: $n_all entries tried, $n_ok installed"
      done <<<"$names"
    fi
    t1=$(now_ms)
    claude_ms=$((t1 - t0))
    claude_counts=$(counts_since "$m")
  fi

  if [ -n "$GOLDENS" ]; then
    write_goldens "$ADD_SRC" "$MKT_SOURCE"
    return
  fi

  say "reasonix: plugin install https://github.com/$REAL --yes ${RX_FLAGS[*]}"
  local rc_rx=0
  m=$(mark); t0=$(now_ms)
  rx "$WORK/rx" plugin install "https://github.com/$REAL" --yes ${RX_FLAGS[@]+"${RX_FLAGS[@]}"} >"$WORK/rx-install.json" 2>"$WORK/rx-install.err" || rc_rx=$?
  t1=$(now_ms)
  rx_ms=$((t1 - t0))
  rx_counts=$(counts_since "$m")
  note "reasonix: exit $rc_rx: $("$BIN/sidebyside" response <"$WORK/rx-install.json")"

  if rev=$(git -C "$REPO_ROOT" rev-parse --short HEAD 2>/dev/null); then
    git -C "$REPO_ROOT" diff --quiet HEAD 2>/dev/null || rev="$rev+dirty"
  else
    rev="(not a git checkout)"
  fi
  local report=$WORK/report.txt
  {
    echo "Real marketplace side by side: $REAL ($MKT), served with $(( ${#args[@]} / 2 )) repositories by the fake GitHub ($FAKE_URL)"
    echo "  claude: ${CLAUDE_VERSION:-not run}    reasonix: $REPO_ROOT @ $rev    $(uname -sm), $(nproc) cpus"
    if [ -n "${SIDEBYSIDE_IN_NETNS:-}" ]; then
      echo "  network: a namespace of its own; interfaces: $(ip -o link show | awk -F': ' '{print $2}' | tr '\n' ' ')"
    else
      echo "  network: the machine's (--no-netns)"
    fi
    echo "  claude:   $claude_ms ms for marketplace add + $n_all installs ($n_ok exit 0); requests: ${claude_counts:--}"
    echo "  reasonix: $rx_ms ms for one bulk install (exit $rc_rx); requests: $rx_counts"
    echo "  repositories asked for but not served (404s in the fake's log):"
    grep 'msg=request' "$FAKE_LOG" | grep 'status=404' |
      sed -n 's/.* path=\([^ ]*\).*/\1/p' | sed -e 's#^/api/v3/repos/##' -e 's#^/_archive/##' -e 's#^/##' |
      awk -F/ '{ print $1 "/" $2 }' | sed 's/\.git$//' | sort | uniq -c | sort -rn |
      awk '{ printf "    %s (%d requests)\n", $2, $1 }' | head -n 200 || true
    if [ "${#NOTES[@]}" -gt 0 ]; then
      echo "  notes:"
      for n in "${NOTES[@]}"; do echo "    - $n"; done
    fi
    echo
    "$BIN/sidebyside" compare -market "$WORK/marketplace.json" -claude-config "$CLAUDE_HOME/.claude" \
      -claude-logs "$WORK/claude-logs" -reasonix-home "$WORK/rx" -reasonix-response "$WORK/rx-install.json"
  } >"$report"
  cat "$report"
  if [ -n "$OUT" ]; then cp "$report" "$OUT"; fi
}

# write_goldens ADD_SRC MKT_SOURCE: after Claude's installs (and details),
# `claude plugin list --json` once, then one golden per tried entry.
write_goldens() {
  [ -n "$CLAUDE_VERSION" ] || { echo "no goldens: Claude Code did not run ($CLAUDE_PROBLEM)" >&2; exit 1; }
  run_claude plugin list --json >"$WORK/claude-list.json" 2>"$WORK/claude-list.err" ||
    { echo "no goldens: claude plugin list --json failed: $(head -n 3 "$WORK/claude-list.err")" >&2; exit 1; }
  local harness added=$1
  [ -z "$LOCAL" ] || added=$2
  harness="$(realpath --relative-to="$REPO_ROOT" "$0") $(printf '%q ' "${ORIG_ARGS[@]}")"
  [ -z "$HARNESS_LABEL" ] || harness=$HARNESS_LABEL
  local ph=(-placeholder "$CLAUDE_HOME=<home>" -placeholder "$WORK=<work>")
  [ -z "$LOCAL" ] || ph+=(-placeholder "$LOCAL=<marketplace>")
  [ -z "$FAKE_URL" ] || ph+=(-placeholder "$FAKE_URL=https://github.com")
  local session=()
  if [ "$SESSION" = 1 ]; then
    # The session fails at its first API call; its init message comes first.
    run_claude -p --output-format stream-json --verbose "list nothing" >"$WORK/claude-session.jsonl" 2>"$WORK/claude-session.err" || true
    session=(-session "$WORK/claude-session.jsonl")
  fi
  "$BIN/sidebyside" goldens -market "$WORK/marketplace.json" -claude-logs "$WORK/claude-logs" \
    -list "$WORK/claude-list.json" -claude-version "$CLAUDE_VERSION" -source "$2" \
    -harness "${harness% }" -add "claude plugin marketplace add $added" -out "$GOLDENS" "${ph[@]}" ${session[@]+"${session[@]}"}
}

# ---------------------------------------------------------------------- run
if [ -n "$REAL$LOCAL" ]; then
  real_main
  exit 0
fi
claude_side
reasonix_side

# -------------------------------------------------------------------- table
if rev=$(git -C "$REPO_ROOT" rev-parse --short HEAD 2>/dev/null); then
  git -C "$REPO_ROOT" diff --quiet HEAD 2>/dev/null || rev="$rev+dirty"
else
  rev="(not a git checkout)"
fi
echo
echo "Side by side: $N plugins (relative entries, 1 skill + 1 command each), one repo on the fake GitHub ($FAKE_URL)"
echo "  claude: ${CLAUDE_VERSION:-not run}    reasonix: $REPO_ROOT @ $rev    $(uname -sm), $(nproc) cpus"
echo
api_cell() {
  local n304
  n304=$(cval api_304 "$1")
  if [ "${n304:-0}" != 0 ]; then echo "$(cval api "$1") (${n304}x304)"; else cval api "$1"; fi
}
fmt='%-38s %9s %9s %9s %11s %9s %7s %5s %6s %9s  %s\n'
# shellcheck disable=SC2059
printf "$fmt" "tool / phase" "wall ms" "ms/plugin" "info/refs" "upload-pack" "API" "archive" "other" "total" "installed" "note"
for i in "${!ROW_NAME[@]}"; do
  ms=${ROW_MS[$i]} c=${ROW_COUNTS[$i]}
  per=-
  case "$ms" in ''|*[!0-9]*) ;; *) per=$(awk -v t="$ms" -v n="$N" 'BEGIN { printf "%.1f", t / n }') ;; esac
  if [ -n "$c" ]; then
    # shellcheck disable=SC2059
    printf "$fmt" "${ROW_NAME[$i]}" "$ms" "$per" "$(cval info_refs "$c")" "$(cval upload_pack "$c")" \
      "$(api_cell "$c")" "$(cval archive "$c")" "$(cval other "$c")" "$(cval total "$c")" "${ROW_INST[$i]}" "${ROW_NOTE[$i]}"
  else
    # shellcheck disable=SC2059
    printf "$fmt" "${ROW_NAME[$i]}" "$ms" "$per" - - - - - - "${ROW_INST[$i]}" "${ROW_NOTE[$i]}"
  fi
done
if [ "${#NOTES[@]}" -gt 0 ]; then
  echo
  echo "Notes:"
  for n in "${NOTES[@]}"; do echo "  - $n"; done
fi
if [ "$CLAUDE_OK" = 1 ] && [ "$RX_OK" = 1 ]; then
  awk -v c="${ROW_MS[0]}" -v r="$(for i in "${!ROW_NAME[@]}"; do [ "${ROW_NAME[$i]}" = "reasonix: install --yes (cold)" ] && echo "${ROW_MS[$i]}"; done)" -v n="$N" \
    'BEGIN { printf "\nCold, per plugin: claude %.1f ms, reasonix %.1f ms (%.1fx)\n", c / n, r / n, (r > 0 ? c / r : 0) }'
fi

if { [ "$SKIP_CLAUDE" = 1 ] || [ "$CLAUDE_OK" = 1 ]; } && [ "$RX_OK" = 1 ]; then
  exit 0
fi
exit 1
