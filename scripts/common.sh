# Shared by scripts/run.sh and scripts/test.sh: system packages and the virtual environment.
# Idempotent: a second run only checks.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/.venv"
export TZ=UTC PIP_DISABLE_PIP_VERSION_CHECK=1

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

apt_install() {  # apt_install PKG... — installs what is missing
  local missing=()
  for pkg in "$@"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
  done
  if [ "${#missing[@]}" -gt 0 ]; then
    echo "==> apt-get install ${missing[*]}"
    as_root apt-get update -qq
    DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
}

python_bin() {
  for candidate in python3.11 python3; do
    if command -v "$candidate" >/dev/null && "$candidate" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))'; then
      command -v "$candidate"; return
    fi
  done
  echo "Python 3.11 is required (Debian 12: apt-get install python3)" >&2; exit 1
}

install_system_packages() {  # install_system_packages DIR — every package listed in DIR/*.txt
  local packages
  mapfile -t packages < <(cat "$1"/*.txt | sed -e 's/#.*//' -e 's/[[:space:]]//g' | grep -v '^$' | sort -u)
  apt_install "${packages[@]}"
}

ensure_venv() {  # ensure_venv [GROUP...] — the project (web dependencies) plus the named groups
  install_system_packages "$ROOT/scripts/apt"  # what every mode needs; tests add scripts/apt/test
  if [ ! -x "$VENV/bin/python" ]; then
    echo "==> creating $VENV"
    "$(python_bin)" -m venv "$VENV"
  fi
  mkdir -p "$ROOT/var"
  local log="$ROOT/var/pip-install.log"
  local args=(-e "$ROOT")
  for group in "$@"; do args+=(--group "$ROOT/pyproject.toml:$group"); done
  echo "==> pip install (log: var/pip-install.log)"
  if ! { "$VENV/bin/python" -m pip install -q --upgrade "pip>=25.1" &&
         "$VENV/bin/python" -m pip install -q "${args[@]}"; } >"$log" 2>&1; then
    cat "$log" >&2
    echo "pip install failed (log above)" >&2
    exit 1
  fi
  # Extra set-up steps (packages that need special flags, browser links, …), one script each.
  local step
  for step in "$ROOT"/scripts/setup.d/*.sh; do
    [ -e "$step" ] || continue
    VENV="$VENV" ROOT="$ROOT" bash "$step"
  done
}
