# Shared by every script: where the cache lives and how to get the venv.
# Sourced, not run. Set-up is idempotent: each step keeps a stamp of what it
# installed and skips itself when the stamp matches.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE="${HEADSPACE_CACHE:-$HOME/.cache/headspace}"
VENV="$CACHE/venv"
PY="$VENV/bin/python"
# This checkout's package and build tools come first, whichever checkout the shared venv's .pth last
# pointed at (two clones set up at once: each script runs its own code).
export PYTHONPATH="$ROOT/py/src:$ROOT/site/py/src:$ROOT/scripts${PYTHONPATH:+:$PYTHONPATH}"
mkdir -p "$CACHE"

say() { printf '\033[1m[headspace]\033[0m %s\n' "$*" >&2; }

stamp_ok() {  # stamp_ok NAME CONTENT: true when the step already ran with CONTENT
  [[ -f "$CACHE/stamps/$1" && "$(cat "$CACHE/stamps/$1")" == "$2" ]]
}
stamp_set() { mkdir -p "$CACHE/stamps"; printf '%s' "$2" > "$CACHE/stamps/$1"; }

# ensure_venv DIR LOCKFILE WHAT: a venv at DIR with LOCKFILE installed and this
# checkout's package editable; rebuilt only when the lockfile or Python changes.
# --require-hashes: every package, dependencies included, must be pinned in LOCKFILE with
# the sha256 of its file, or pip refuses the whole install (scripts/lock_hashes writes them).
# pip does not hash-check what it fetches for an isolated build of an sdist (pypa/pip#11974),
# so the lock's own setuptools/wheel go in first, checked, and sdists (transformers-stream-
# generator has no wheel) build with them: --no-build-isolation. An sdist whose build backend
# is not setuptools then fails loudly (ModuleNotFoundError): pin the backend and add it here.
ensure_venv() {
  local dir="$1" lock="$2" what="$3" name
  name="$(basename "$dir")"
  local hash
  hash="$(sha256sum "$lock" | cut -c1-16)-$(python3 -c 'import sys;print(sys.version_info[:2])')"
  if ! stamp_ok "$name" "$hash" || [[ ! -x "$dir/bin/python" ]]; then
    say "installing $what into $dir"
    rm -rf "$dir"
    python3 -m venv "$dir"
    awk '/^[^ #-]/ {keep = ($0 ~ /^(setuptools|wheel)==/)} keep' "$lock" > "$dir/build-tools.txt"
    if [[ -s "$dir/build-tools.txt" ]]; then
      "$dir/bin/python" -m pip install -q --disable-pip-version-check --require-hashes --no-deps \
        --only-binary=:all: -r "$dir/build-tools.txt"
    fi
    "$dir/bin/python" -m pip install -q --disable-pip-version-check --require-hashes \
      --no-build-isolation -r "$lock"
    stamp_set "$name" "$hash"
  fi
  # The library, the site's Python and the build tools (scripts/sitebuild), from this checkout (a fresh
  # clone moves it): .pth lines, not `pip install -e`, which would write egg-info into py/src
  # (the build writes nothing there).
  "$dir/bin/python" - "$ROOT/py/src" "$ROOT/site/py/src" "$ROOT/scripts" <<'PY'
import sys, sysconfig
from pathlib import Path
site = Path(sysconfig.get_paths()["purelib"])
for old in site.glob("__editable__*headspace*"):
    old.unlink()
(site / "headspace-checkout.pth").write_text("".join(path + "\n" for path in sys.argv[1:]))
PY
}
