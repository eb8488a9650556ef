#!/bin/sh
# The hook's checks: the shared setup, then the rules, fetched when it runs.
. "${CLAUDE_PLUGIN_ROOT}/scripts/common.sh"
exec npx --yes guard-rules@latest check "$@"
