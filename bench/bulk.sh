#!/usr/bin/env bash
# Bulk install at the floor (SPEC §14; issue 13). Not part of CI.
#
# For each marketplace size (default: 300 entries over 50 plugin repositories
# plus the marketplace's own, and 1,000 over 200), bench/bulk builds a
# synthetic marketplace on the fake GitHub (loopback, real git; see
# bench/bulk/main.go for its shape: relative, github+sha, url+sha and
# git-subdir entries, half of the pins off a branch tip) and serves it.
# Then, in one run:
#   archive floor   curl -L each repository's REST tarball link at the pinned
#                   commit | tar -xzf -, 4 at a time (xargs -P4)
#   git floor       git init + git fetch --depth 1 --no-tags URL SHA +
#                   git checkout FETCH_HEAD, 4 at a time
#   cold            reasonix plugin install SRC --yes in a fresh home
#   warm            reasonix plugin install SRC --dry-run --replace again
#                   (everything cached; --replace so every action is planned
#                   rather than reported as already installed), 3x --runs
#                   times as the daemon's: a re-plan takes tens of ms, where
#                   this VM's stolen time moves single runs by a third
#   offline         the same with --offline
#   daemon          the warm and the offline re-plan as POST /plugins/plan to
#                   `reasonix serve` on the same home (SPEC §12), where no
#                   process starts per plan: one untimed plan warms it, then
#                   3x --runs of each (medians; peak RSS is the daemon's VmHWM)
#   strace          one more cold install in a fresh home under
#                   strace -f -c (not timed): syscalls per installed file
# The floors and the cold install are repeated --runs times, interleaved,
# and the table shows medians; each reasonix row also shows its peak RSS
# (/usr/bin/time -f %M, the highest of the runs), the fake's request counts
# (from its access log) and the planId, which must be the same warm and
# offline. Every ratio is to the archive floor of the same run.
#
# "meta" counts filesystem metadata syscalls (stat family, getdents64,
# mkdir/unlink/rename, chmod, utimensat, readlink, access; see
# bench/bulk/main.go metadataCalls), "opens" openat, "syncs" the fsync family.
#
# Usage: bench/bulk.sh [options]
#   -s, --size ExR       one size, E entries over R plugin repositories (repeatable;
#                        default 300x50 and 1000x200)
#   -r, --runs N         timed runs of the floors and the cold install (default 3)
#   --no-strace          skip the strace run
#   --bin PATH           use this reasonix binary instead of building one
#   --also NAME=PATH     also run this reasonix binary (e.g. a build from before a
#                        change), interleaved with the first in every run, in rows
#                        of its own named NAME (repeatable)
#   --import O/N=DIR     serve these folders instead (repeatable; the first is the
#                        marketplace): a real marketplace's tree, one commit each
#   --modes LIST         how the fake answers, comma-separated (default prebuilt,latency):
#                          prebuilt  every archive built before timing, answered at once
#                          latency   the same, each request answered --latency-ms later
#   --latency-ms N       the latency mode's added delay per request (default 50)
#   --keep               keep the work directory (printed at the end)
# Needs: go, git, curl, tar, /usr/bin/time; strace for the strace row.
# Exit status: 0 when every reasonix install installed every plugin and the
# warm and offline planIds agree, 1 otherwise (the table is printed either
# way), 2 on usage errors.
set -euo pipefail

usage() { sed -n '/^# Usage:/,/^# Exit status/p' "$0" | sed 's/^# \{0,1\}//'; exit "${1:-0}"; }

SIZES=()
IMPORTS=()
RUNS=3
STRACE=1
RXBIN=
KEEP=0
ALSO=()
MODES=prebuilt,latency
LATENCY_MS=50
while [ $# -gt 0 ]; do
  case "$1" in
    -s|--size) SIZES+=("${2:?}"); shift 2 ;;
    -r|--runs) RUNS=${2:?}; shift 2 ;;
    --no-strace) STRACE=0; shift ;;
    --bin) RXBIN=${2:?}; shift 2 ;;
    --import) IMPORTS+=("${2:?}"); shift 2 ;;
    --also) ALSO+=("${2:?}"); shift 2 ;;
    --keep) KEEP=1; shift ;;
    --modes) MODES=${2:?}; shift 2 ;;
    --latency-ms) LATENCY_MS=${2:?}; shift 2 ;;
    -h|--help) usage 0 ;;
    *) echo "unknown argument: $1" >&2; usage 2 >&2 ;;
  esac
done
case "$RUNS" in ''|*[!0-9]*|0) echo "--runs wants a positive number, got '$RUNS'" >&2; exit 2 ;; esac
case "$LATENCY_MS" in ''|*[!0-9]*|0) echo "--latency-ms wants a positive number, got '$LATENCY_MS'" >&2; exit 2 ;; esac
IFS=, read -r -a MODE_LIST <<<"$MODES"
for m in "${MODE_LIST[@]}"; do
  case "$m" in prebuilt|latency) ;; *) echo "--modes wants prebuilt and/or latency, got '$m'" >&2; exit 2 ;; esac
done
[ "${#MODE_LIST[@]}" -gt 0 ] || { echo "--modes is empty" >&2; exit 2; }
for s in "${SIZES[@]}"; do
  case "$s" in [0-9]*x[0-9]*) ;; *) echo "--size wants ENTRIESxREPOS, got '$s'" >&2; exit 2 ;; esac
done
if [ "${#IMPORTS[@]}" -gt 0 ]; then
  [ "${#SIZES[@]}" -eq 0 ] || { echo "--import and --size do not go together" >&2; exit 2; }
  SIZES=(import)
elif [ "${#SIZES[@]}" -eq 0 ]; then
  SIZES=(300x50 1000x200)
fi
if [ "$STRACE" = 1 ] && ! command -v strace >/dev/null; then
  echo "strace is not installed (apt-get install strace, or --no-strace)" >&2; exit 2
fi

say() { printf '== %s\n' "$*" >&2; }
now_ns() { date +%s%N; }

REPO_ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/reasonix-bulk.XXXXXX")
BIN=$WORK/bin
SERVE_PID=

DAEMON_PID=

stop_server() {
  if [ -n "$SERVE_PID" ] && kill -0 "$SERVE_PID" 2>/dev/null; then
    kill "$SERVE_PID" 2>/dev/null || true
    wait "$SERVE_PID" 2>/dev/null || true
  fi
  SERVE_PID=
}
stop_daemon() {
  if [ -n "$DAEMON_PID" ] && kill -0 "$DAEMON_PID" 2>/dev/null; then
    kill "$DAEMON_PID" 2>/dev/null || true
    wait "$DAEMON_PID" 2>/dev/null || true
  fi
  DAEMON_PID=
}
cleanup() {
  local rc=$?
  stop_daemon
  stop_server
  if [ "$KEEP" = 1 ]; then say "work directory kept: $WORK"; else rm -rf "$WORK"; fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

say "building reasonix, bench/bulk and bench/sidebyside from $REPO_ROOT"
mkdir -p "$BIN"
(cd "$REPO_ROOT" &&
  go build -o "$BIN/bulk" ./bench/bulk &&
  go build -o "$BIN/sidebyside" ./bench/sidebyside)
if [ -n "$RXBIN" ]; then
  cp "$RXBIN" "$BIN/reasonix"
else
  (cd "$REPO_ROOT" && CGO_ENABLED=0 go build -o "$BIN/reasonix" ./cmd/reasonix)
fi
RXNAMES=(reasonix)
for a in "${ALSO[@]}"; do
  name=${a%%=*} path=${a#*=}
  case "$name" in ''|*[!a-zA-Z0-9_-]*|reasonix) echo "--also wants NAME=PATH with a new plain NAME, got '$a'" >&2; exit 2 ;; esac
  [ -x "$path" ] || { echo "--also $name: $path is not an executable" >&2; exit 2; }
  cp "$path" "$BIN/$name"
  RXNAMES+=("$name")
done

# Floors: one job per target line "OWNER/NAME SHA ARCHIVE_URL CLONE_URL".
floor_archive_one() { # DEST NAME SHA URL
  local d=$1/${2//\//_}
  mkdir -p "$d"
  curl -sSfL "$4" | tar -xzf - -C "$d"
}
floor_git_one() { # DEST NAME SHA CLONE
  local d=$1/${2//\//_}
  git init -q "$d"
  git -C "$d" fetch -q --depth 1 --no-tags "$4" "$3"
  git -C "$d" -c advice.detachedHead=false checkout -q FETCH_HEAD
}
export -f floor_archive_one floor_git_one

# settle_disk: untimed, before every timed phase. The phase before left
# dirty pages (the floor never syncs what it unpacked), and the first
# syncfs(2) of a cold install would write them back on the install's clock:
# 35 ms after one archive floor of 300/51 here.
settle_disk() { sync; }

# floor KIND DEST: prints elapsed ms. DEST must be new: nothing a timed phase
# writes is deleted before the whole bench is done (the work directory goes
# at exit). On ext4 without a journal (this project's VM) a new inode skips
# every inode of its group deleted in the last 60 s (360 s while the inode
# table block is dirty), scanning past each one: a phase that runs right
# after an rm -rf of a few thousand files pays 0.2-0.7 ms per mkdir for the
# bench's own cleanup instead of ~25 us (perf: recently_deleted <-
# find_inode_bit <- __ext4_new_inode). Deleting the git floor's checkout
# just before each cold install charged the install for it.
floor() {
  local kind=$1 dest=$2 t0 t1
  mkdir -p "$dest"
  settle_disk
  t0=$(now_ns)
  if [ "$kind" = archive ]; then
    awk '{print $1, $2, $3}' "$SRV/targets" | xargs -P4 -n3 bash -c 'floor_archive_one "$0" "$@"' "$dest"
  else
    awk '{print $1, $2, $4}' "$SRV/targets" | xargs -P4 -n3 bash -c 'floor_git_one "$0" "$@"' "$dest"
  fi
  t1=$(now_ns)
  echo $(((t1 - t0) / 1000000))
}

# The fake's access log: a request is logged when its response is done.
mark() { wc -l <"$SRV/fake.log" | tr -d ' '; }
settle() {
  local a b
  a=$(mark)
  while sleep 0.1; b=$(mark); [ "$a" != "$b" ]; do a=$b; done
}
counts_since() { settle; "$BIN/sidebyside" counts -log "$SRV/fake.log" -from "$1"; }
cval() { printf '%s\n' "$2" | tr ' ' '\n' | sed -n "s/^$1=//p"; }

rx_env() {
  env -u REASONIX_OFFLINE -u REASONIX_GIT -u GITHUB_TOKEN -u GH_TOKEN -u REASONIX_MIRROR \
    REASONIX_HOME="$1" REASONIX_GITHUB_URL="$FAKE_URL" REASONIX_GITHUB_API_URL="$FAKE_API" "${@:2}"
}

# rx HOME OUT ARGS...: one timed reasonix run; sets RX_MS, RX_RSS (KiB),
# RX_SUM (bulk response line), RX_RC.
rx() {
  local home=$1 out=$2 t0 t1
  shift 2
  RX_RC=0
  settle_disk
  t0=$(now_ns)
  rx_env "$home" /usr/bin/time -f '%M' -o "$out.time" "$BIN/$RXN" plugin install "$SRC" "$@" \
    >"$out.json" 2>"$out.err" </dev/null || RX_RC=$?
  t1=$(now_ns)
  RX_MS=$(((t1 - t0) / 1000000))
  RX_RSS=$(tail -n 1 "$out.time")
  RX_SUM=$("$BIN/bulk" response <"$out.json")
}

# daemon_start HOME: `reasonix serve` on HOME; sets DAEMON_URL, DAEMON_TOKEN.
daemon_start() {
  local home=$1
  rm -f "$home/serve.addr"
  # exec all the way down, so DAEMON_PID is the daemon's (its VmHWM is read).
  (exec env -u REASONIX_OFFLINE -u REASONIX_GIT -u GITHUB_TOKEN -u GH_TOKEN -u REASONIX_MIRROR \
    REASONIX_HOME="$home" REASONIX_GITHUB_URL="$FAKE_URL" REASONIX_GITHUB_API_URL="$FAKE_API" \
    "$BIN/$RXN" serve --addr 127.0.0.1:0 >"$SRV/serve-$RXN.log" 2>&1 </dev/null) &
  DAEMON_PID=$!
  for _ in $(seq 1 300); do
    [ -s "$home/serve.addr" ] && break
    kill -0 "$DAEMON_PID" 2>/dev/null || break
    sleep 0.05
  done
  [ -s "$home/serve.addr" ] || { stop_daemon; return 1; }
  DAEMON_URL=http://$(cat "$home/serve.addr") DAEMON_TOKEN=$(cat "$home/serve.token")
  case "$DAEMON_URL" in http://127.*) ;; *) stop_daemon; return 1 ;; esac
}
# daemon_plan OFFLINE OUT: one POST /plugins/plan; sets D_MS, D_SUM.
daemon_plan() {
  local body t
  body=$(printf '{"source":"%s","replace":true,"offline":%s}' "$SRC" "$1")
  t=$(curl -s -o "$2.json" -w '%{time_total}' -H "Authorization: Bearer $DAEMON_TOKEN" \
    -H 'Content-Type: application/json' -d "$body" "$DAEMON_URL/plugins/plan" || echo 0)
  D_MS=$(awk -v t="$t" 'BEGIN { printf "%d", t * 1000 + 0.5 }')
  D_SUM=$("$BIN/bulk" response <"$2.json")
}

median() { tr ' ' '\n' | grep -v '^$' | sort -n | awk '{a[NR]=$1} END {if (NR==0) print "-"; else if (NR%2) print a[(NR+1)/2]; else print int((a[NR/2]+a[NR/2+1])/2)}'; }
maxof() { tr ' ' '\n' | grep -v '^$' | sort -n | tail -n 1; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0 && a != "-") printf "%.2f", a / b; else print "-" }'; }

ROWS=()
row() { ROWS+=("$(printf '%-14s %-33s %8s %6s %8s %5s %5s %5s %5s %5s  %s' "$@")"); }
FAIL=0
NOTES=()
note() { NOTES+=("$*"); say "$*"; }

for size in "${SIZES[@]}"; do
for mode in "${MODE_LIST[@]}"; do
  SRV=$WORK/srv-$size-$mode
  mkdir -p "$SRV"
  lat=() suffix=
  if [ "$mode" = latency ]; then lat=(-latency "${LATENCY_MS}ms") suffix="+${LATENCY_MS}ms"; fi
  if [ "$size" = import ]; then
    label=import$suffix
    args=()
    for i in "${IMPORTS[@]}"; do args+=(-import "$i"); done
    say "serving ${#IMPORTS[@]} imported folders ($mode)"
    "$BIN/bulk" serve "${args[@]}" "${lat[@]}" -dir "$SRV" 2>"$SRV/fake.log" &
  else
    entries=${size%x*} repos=${size#*x}
    label="${entries}/$((repos + 1))$suffix"
    say "building $entries entries over $repos repositories (+ the marketplace) on the fake GitHub ($mode)"
    "$BIN/bulk" serve -entries "$entries" -repos "$repos" "${lat[@]}" -dir "$SRV" 2>"$SRV/fake.log" &
  fi
  SERVE_PID=$!
  for _ in $(seq 1 6000); do
    [ -f "$SRV/ready" ] && break
    kill -0 "$SERVE_PID" 2>/dev/null || { echo "bench/bulk serve exited:" >&2; tail -n 20 "$SRV/fake.log" >&2; exit 1; }
    sleep 0.05
  done
  [ -f "$SRV/ready" ] || { echo "bench/bulk serve never got ready" >&2; exit 1; }
  # shellcheck disable=SC1091
  FAKE_URL=$(sed -n 's/^export REASONIX_GITHUB_URL=//p' "$SRV/env")
  FAKE_API=$(sed -n 's/^export REASONIX_GITHUB_API_URL=//p' "$SRV/env")
  case "$FAKE_URL" in http://127.*) ;; *) echo "fake is not on loopback: $FAKE_URL" >&2; exit 1 ;; esac
  SRC=$(cat "$SRV/source")
  NREPOS=$(wc -l <"$SRV/targets" | tr -d ' ')
  say "serving $SRC from $FAKE_URL ($NREPOS repositories)"

  # One untimed dry run first, as every archive is built before timing: the
  # fake keeps each git answer it gives (WithGitCache), so no timed run pays
  # for git running on the server.
  for RXN in "${RXNAMES[@]}"; do
    rx_env "$SRV/home-prewarm-$RXN" "$BIN/$RXN" plugin install "$SRC" --dry-run >/dev/null 2>&1 </dev/null || true
  done

  A_MS=()
  G_MS=()
  declare -A C_MS=() C_RSS=() C_COUNTS=() C_SUM=() HOME_LAST=()
  for run in $(seq 1 "$RUNS"); do
    say "[$label] run $run/$RUNS: archive floor, git floor, cold install (${RXNAMES[*]})"
    A_MS+=("$(floor archive "$SRV/floor-archive-$run")")
    G_MS+=("$(floor git "$SRV/floor-git-$run")")
    say "  archive ${A_MS[-1]} ms, git ${G_MS[-1]} ms"
    for RXN in "${RXNAMES[@]}"; do
      HOME_LAST[$RXN]=$SRV/home-$RXN-$run
      m=$(mark)
      rx "${HOME_LAST[$RXN]}" "$SRV/cold-$RXN-$run" --yes
      C_MS[$RXN]="${C_MS[$RXN]:-} $RX_MS" C_RSS[$RXN]="${C_RSS[$RXN]:-} $RX_RSS"
      C_COUNTS[$RXN]=$(counts_since "$m") C_SUM[$RXN]=$RX_SUM
      case "$RX_SUM" in ok=true*) ;; *)
        FAIL=1; note "[$label] $RXN cold run $run: $RX_SUM (exit $RX_RC): $(head -c 300 "$SRV/cold-$RXN-$run.err")" ;; esac
      say "  $RXN $RX_MS ms (${RX_RSS} KiB)"
    done
  done
  AF=$(echo "${A_MS[*]}" | median)
  GF=$(echo "${G_MS[*]}" | median)
  row "$label" "archive floor (curl|tar)" "$AF" "1.00" - - - - - - "runs: ${A_MS[*]}"
  row "$label" "git floor (fetch+checkout)" "$GF" "$(ratio "$GF" "$AF")" - - - - - - "runs: ${G_MS[*]}"

  c() { printf '%s' "$(cval "$1" "$2")"; }
  for RXN in "${RXNAMES[@]}"; do
    home=${HOME_LAST[$RXN]}
    INSTALLED=$("$BIN/bulk" files "$home/plugins" 2>/dev/null || echo 0)
    W_MS=() W_RSS=() O_MS=() O_RSS=()
    for run in $(seq 1 $((RUNS * 3))); do
      m=$(mark)
      rx "$home" "$SRV/warm-$RXN-$run" --dry-run --replace
      W_MS+=("$RX_MS") W_RSS+=("$RX_RSS") W_COUNTS=$(counts_since "$m") W_SUM=$RX_SUM
      m=$(mark)
      rx "$home" "$SRV/offline-$RXN-$run" --dry-run --replace --offline
      O_MS+=("$RX_MS") O_RSS+=("$RX_RSS") O_COUNTS=$(counts_since "$m") O_SUM=$RX_SUM
    done
    WP=$(cval planId "$W_SUM") OP=$(cval planId "$O_SUM")
    if [ -z "$WP" ] || [ "$WP" != "$OP" ]; then
      FAIL=1; note "[$label] $RXN: warm planId $WP != offline planId $OP ($W_SUM / $O_SUM)"
    fi
    for s in "$W_SUM" "$O_SUM"; do
      case "$s" in ok=true*) ;; *) FAIL=1; note "[$label] $RXN re-plan failed: $s" ;; esac
    done
    DW_MS=() DO_MS=() DRSS=- DW_COUNTS= DO_COUNTS= DWP= DOP=
    if daemon_start "$home"; then
      daemon_plan false "$SRV/daemon-first-$RXN"
      say "[$label] $RXN daemon: first plan ${D_MS} ms (untimed)"
      for run in $(seq 1 $((RUNS * 3))); do
        m=$(mark)
        daemon_plan false "$SRV/daemon-warm-$RXN-$run"
        DW_MS+=("$D_MS") DW_SUM=$D_SUM
        [ "$run" != 1 ] || DW_COUNTS=$(counts_since "$m")
        m=$(mark)
        daemon_plan true "$SRV/daemon-offline-$RXN-$run"
        DO_MS+=("$D_MS") DO_SUM=$D_SUM
        [ "$run" != 1 ] || DO_COUNTS=$(counts_since "$m")
      done
      DRSS=$(awk '/^VmHWM:/ {print $2}' "/proc/$DAEMON_PID/status" 2>/dev/null || echo -)
      stop_daemon
      DWP=$(cval planId "$DW_SUM") DOP=$(cval planId "$DO_SUM")
      if [ "$DWP" != "$WP" ] || [ "$DOP" != "$WP" ]; then
        FAIL=1; note "[$label] $RXN daemon: planIds $DWP (warm) / $DOP (offline) != the CLI's $WP"
      fi
    else
      FAIL=1; note "[$label] $RXN: reasonix serve did not start: $(tail -n 3 "$SRV/serve-$RXN.log" | tr '\n' ' ')"
    fi
    ST=-
    if [ "$STRACE" = 1 ]; then
      say "[$label] $RXN: cold install under strace -f -c"
      shome=$SRV/home-$RXN-strace
      rx_env "$shome" strace -f -c -o "$SRV/strace-$RXN.txt" "$BIN/$RXN" plugin install "$SRC" --yes \
        >"$SRV/strace-$RXN.json" 2>"$SRV/strace-$RXN.err" </dev/null || true
      n=$("$BIN/bulk" files "$shome/plugins" 2>/dev/null || echo 0)
      ST=$("$BIN/bulk" strace -file "$SRV/strace-$RXN.txt" -files "$n")
    fi
    CM=$(echo "${C_MS[$RXN]}" | median)
    CC=${C_COUNTS[$RXN]}
    row "$label" "$RXN cold --yes" "$CM" "$(ratio "$CM" "$AF")" "$(echo "${C_RSS[$RXN]}" | maxof)" \
      "$(c info_refs "$CC")" "$(c upload_pack "$CC")" "$(c api "$CC")" "$(c archive "$CC")" "$(c total "$CC")" \
      "runs:${C_MS[$RXN]}; $(cval by_status "${C_SUM[$RXN]}"), $INSTALLED files"
    WM=$(echo "${W_MS[*]}" | median) OM=$(echo "${O_MS[*]}" | median)
    row "$label" "$RXN warm re-plan" "$WM" "$(ratio "$WM" "$AF")" "$(echo "${W_RSS[*]}" | maxof)" \
      "$(c info_refs "$W_COUNTS")" "$(c upload_pack "$W_COUNTS")" "$(c api "$W_COUNTS")" "$(c archive "$W_COUNTS")" "$(c total "$W_COUNTS")" \
      "runs: ${W_MS[*]}; planId $WP"
    row "$label" "$RXN offline re-plan" "$OM" "$(ratio "$OM" "$AF")" "$(echo "${O_RSS[*]}" | maxof)" \
      "$(c info_refs "$O_COUNTS")" "$(c upload_pack "$O_COUNTS")" "$(c api "$O_COUNTS")" "$(c archive "$O_COUNTS")" "$(c total "$O_COUNTS")" \
      "runs: ${O_MS[*]}; planId $OP"
    if [ "${#DW_MS[@]}" -gt 0 ]; then
      DWM=$(echo "${DW_MS[*]}" | median) DOM=$(echo "${DO_MS[*]}" | median)
      row "$label" "$RXN daemon warm re-plan" "$DWM" "$(ratio "$DWM" "$AF")" "$DRSS" \
        "$(c info_refs "$DW_COUNTS")" "$(c upload_pack "$DW_COUNTS")" "$(c api "$DW_COUNTS")" "$(c archive "$DW_COUNTS")" "$(c total "$DW_COUNTS")" \
        "runs: ${DW_MS[*]}; planId $DWP"
      row "$label" "$RXN daemon offline re-plan" "$DOM" "$(ratio "$DOM" "$AF")" "$DRSS" \
        "$(c info_refs "$DO_COUNTS")" "$(c upload_pack "$DO_COUNTS")" "$(c api "$DO_COUNTS")" "$(c archive "$DO_COUNTS")" "$(c total "$DO_COUNTS")" \
        "runs: ${DO_MS[*]}; planId $DOP"
    fi
    [ "$ST" = - ] || ROWS+=("$(printf '%-14s %-33s %s' "$label" "$RXN strace -f -c, cold" "$ST")")
  done
  unset C_MS C_RSS C_COUNTS C_SUM HOME_LAST
  stop_server
done
done

if rev=$(git -C "$REPO_ROOT" rev-parse --short HEAD 2>/dev/null); then
  git -C "$REPO_ROOT" diff --quiet HEAD 2>/dev/null || rev="$rev+dirty"
else
  rev="(not a git checkout)"
fi
echo
echo "bench/bulk.sh: $REPO_ROOT @ $rev, $(uname -sm), $(nproc) cpus, $RUNS runs (medians)"
printf '%-14s %-33s %8s %6s %8s %5s %5s %5s %5s %5s  %s\n' size phase "wall ms" "xfloor" "RSS KiB" refs packs api arch reqs note
for r in "${ROWS[@]}"; do echo "$r"; done
if [ "${#NOTES[@]}" -gt 0 ]; then
  echo
  echo "Notes:"
  for n in "${NOTES[@]}"; do echo "  - $n"; done
fi
exit "$FAIL"
