#!/usr/bin/env bash
# Installs the Debian packages the study needs, only those that are missing.
# Idempotent: when everything is present it only queries dpkg.
set -euo pipefail

# The packages COMMAND (paper, measure or test; default test, which needs them all) needs, from
# scripts/debian-packages.tsv, the one list (each tool of testbed/tools.py names its package
# there).
command=${1:-test}
case "$command" in
  paper | measure | test) ;;
  *) echo "setup: unknown command '$command' (paper, measure or test)" >&2; exit 2 ;;
esac
packages=()
while IFS=$'\t' read -r package commands; do
  [[ -z "$package" || "$package" == \#* ]] && continue
  [[ " $commands " == *" $command "* ]] && packages+=("$package")
done <"$(dirname "$0")/debian-packages.tsv"

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$p")
done

# PostgreSQL refuses to run as root: a root run starts it as this unprivileged user
# (testbed/services/postgres.py).
pg_user() {
  [[ " ${packages[*]} " == *" postgresql-15 "* ]] || return 0
  id -u mwlab-pg >/dev/null 2>&1 && return 0
  ((EUID == 0)) || return 0  # not root: PostgreSQL runs as the caller
  useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin mwlab-pg
  echo "setup: created the system user mwlab-pg, which runs PostgreSQL for root"
}

if ((${#missing[@]} == 0)); then
  echo "setup: all ${#packages[@]} Debian packages of make $command present"
  pg_user
  exit 0
fi

if ! command -v apt-get >/dev/null; then
  echo "setup: missing packages (${missing[*]}) and no apt-get; use 'nix develop' or install them by hand" >&2
  exit 1
fi
sudo=()
if ((EUID != 0)); then
  command -v sudo >/dev/null || { echo "setup: need root (or sudo) to install: ${missing[*]}" >&2; exit 1; }
  sudo=(sudo)
fi

echo "setup: installing ${#missing[@]} Debian packages for make $command: ${missing[*]}"
start=$SECONDS
"${sudo[@]}" apt-get update -q
DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
echo "setup: Debian packages installed in $((SECONDS - start)) s"
pg_user
