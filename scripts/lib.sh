# Shared by every script: where the cache lives and how to get the venv.
# Sourced, not run. Set-up is idempotent: each step keeps a stamp of what it
# installed and skips itself when the stamp matches.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE="${HEADSPACE_CACHE:-$HOME/.cache/headspace}"
VENV="$CACHE/venv"
PY="$VENV/bin/python"
mkdir -p "$CACHE"

say() { printf '\033[1m[headspace]\033[0m %s\n' "$*" >&2; }

stamp_ok() {  # stamp_ok NAME CONTENT: true when the step already ran with CONTENT
  [[ -f "$CACHE/stamps/$1" && "$(cat "$CACHE/stamps/$1")" == "$2" ]]
}
stamp_set() { mkdir -p "$CACHE/stamps"; printf '%s' "$2" > "$CACHE/stamps/$1"; }
