# Sourced by the other scripts (and, harmlessly, by itself).
. "${CLAUDE_PLUGIN_ROOT}/scripts/common.sh"
uvx ruff==0.6.0 --version >/dev/null
