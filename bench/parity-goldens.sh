#!/usr/bin/env bash
# Parity goldens of the real corpus (issue 22). Not part of CI.
#
# For each corpus marketplace OWNER__REPO (a folder of ../shared/corpus
# with a marketplace.json) whose repository was brought here (a git
# directory MIRRORS/OWNER+REPO[/repo], as the search tool's fetch leaves
# them), records Claude Code's goldens with
#   bench/claude-side-by-side.sh --goldens GOLDENS/OWNER__REPO --real OWNER/REPO
#     --bare OWNER/REPO=GITDIR [--bare R=GITDIR for each remote entry's repository brought here]
# so relative entries and the remote entries whose repositories are here are
# installed by Claude (one process per entry, in a loopback-only network
# namespace, github.com redirected to the fake GitHub). Entries whose
# repository is not here are not tried and get no golden. A snapshot whose
# HEAD lacks files (fetch leaves out files of 4 MiB and more) cannot be
# cloned; it is served as `sidebyside repair` rewrites it (one commit, the
# missing files replaced by placeholders), and its goldens' source says so.
# Then it writes the marketplace's skeletons (`sidebyside skeletons`), which
# the corpus parity test serves in place of the repositories.
#
# Usage: bench/parity-goldens.sh [--corpus DIR] [--mirrors DIR] [--goldens DIR]
#                                [--skeletons DIR] [--skeletons-only]
#                                [--claude-bin PATH] [OWNER__REPO…]
#   defaults: --corpus ../shared/corpus, --mirrors /work/.mirror,
#             --goldens cmd/reasonix/testdata/parity/goldens,
#             --skeletons cmd/reasonix/testdata/parity/skeletons, every marketplace
#   --skeletons-only   write the skeletons only (no Claude)
#   --only NAME,NAME   Claude tries only these entries (the other goldens stay)
set -euo pipefail
REPO_ROOT=$(cd "$(dirname "$0")/.." && pwd)
CORPUS=$REPO_ROOT/../shared/corpus MIRRORS=/work/.mirror GOLDENS=$REPO_ROOT/cmd/reasonix/testdata/parity/goldens
SKELETONS=$REPO_ROOT/cmd/reasonix/testdata/parity/skeletons SKELETONS_ONLY=0
CLAUDE_BIN=() ONLY=()
while [ $# -gt 0 ]; do
  case "$1" in
    --corpus) CORPUS=${2:?}; shift 2 ;;
    --mirrors) MIRRORS=${2:?}; shift 2 ;;
    --goldens) GOLDENS=${2:?}; shift 2 ;;
    --skeletons) SKELETONS=${2:?}; shift 2 ;;
    --skeletons-only) SKELETONS_ONLY=1; shift ;;
    --only) ONLY=(--only "${2:?}"); shift 2 ;;
    --claude-bin) CLAUDE_BIN=(--claude-bin "${2:?}"); shift 2 ;;
    -h|--help) sed -n '2,/^set -e/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "unknown option $1" >&2; exit 2 ;;
    *) break ;;
  esac
done
[ -d "$CORPUS" ] || { echo "no corpus at $CORPUS" >&2; exit 2; }
TMP=$(mktemp -d "${TMPDIR:-/tmp}/parity-goldens.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
(cd "$REPO_ROOT" && go build -o "$TMP/sidebyside" ./bench/sidebyside)

# gitdir OWNER/REPO: the mirror's git directory, or nothing.
gitdir() {
  local d=$MIRRORS/${1/\//+}
  for g in "$d/repo/.git" "$d/repo" "$d"; do
    if git --git-dir="$g" rev-parse --verify -q HEAD >/dev/null 2>&1; then echo "$g"; return; fi
  done
}

markets=("$@")
if [ "${#markets[@]}" = 0 ]; then
  for d in "$CORPUS"/*/marketplace.json; do markets+=("$(basename "$(dirname "$d")")"); done
fi
rc=0
for m in "${markets[@]}"; do
  repo=${m/__//}
  g=$(gitdir "$repo")
  if [ -z "$g" ]; then echo "== $m: repository not brought here ($MIRRORS/${repo/\//+}); skipped" >&2; continue; fi
  if [ "$SKELETONS_ONLY" = 1 ]; then
    "$TMP/sidebyside" skeletons -corpus "$CORPUS" -market "$m" -mirrors "$MIRRORS" -out "$SKELETONS/$m" || rc=1
    continue
  fi
  head=$(git --git-dir="$g" rev-parse HEAD)
  label=$repo@$head
  served=$(  "$TMP/sidebyside" repair -git-dir "$g" -out "$TMP/${repo/\//+}.git")
  if [ "$served" != "$head" ]; then
    g=$TMP/${repo/\//+}.git
    label="$repo@$head (served as $served: files the snapshot lacks replaced by placeholders)"
  fi
  bares=(--bare "$repo=$g")
  # Remote entries' GitHub repositories that are here too.
  while IFS= read -r r; do
    [ -n "$r" ] && [ "$r" != "$repo" ] || continue
    rg=$(gitdir "$r")
    [ -n "$rg" ] && bares+=(--bare "$r=$rg")
  done < <(jq -r '.plugins[]? | .source | objects | (.repo // .url // empty)' "$CORPUS/$m/marketplace.json" |
    sed -e 's#^https://github.com/##' -e 's#\.git$##' | grep -E '^[^/:]+/[^/]+$' | sort -u)
  echo "== $m: serving $(( ${#bares[@]} / 2 )) repositories" >&2
  "$REPO_ROOT/bench/claude-side-by-side.sh" --goldens "$GOLDENS/$m" --real "$repo" --source-label "$label" \
    --harness-label "bench/parity-goldens.sh $m (Claude: ${CLAUDE_BIN[1]:-npm}; repositories: $MIRRORS)" \
    "${bares[@]}" ${CLAUDE_BIN[@]+"${CLAUDE_BIN[@]}"} ${ONLY[@]+"${ONLY[@]}"} || rc=1
  "$TMP/sidebyside" skeletons -corpus "$CORPUS" -market "$m" -mirrors "$MIRRORS" -out "$SKELETONS/$m" || rc=1
done
exit "$rc"
