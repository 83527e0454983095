#!/usr/bin/env bash
# Installs the Debian packages Nearcard builds and tests with, and only those
# that are missing (apt-get runs only when something is absent).
# Usage: scripts/install-deps.sh [--with-python] [--with-packaging]
#   --with-python     also create .venv with the Python peers the tests use.
#   --with-packaging  also lintian, which checks the Debian package (make deb).
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  pkg-config
  libsodium-dev        # X25519, Ed25519, sealed boxes, AEAD, Argon2id
  libssl-dev           # libcrypto: ECDSA P-256
  libsqlite3-dev       # GRDB's SQLite
  libavahi-client-dev  # DNS-SD through avahi-daemon
  libqrencode-dev      # QR rendering
  libzbar-dev          # QR scanning from images (loaded on first use: Sources/CZBar)
  libxml2-dev          # the CardDAV sync's XML (loaded on first use: Sources/CXML)
  libpng-dev           # QR images: PNG in and out
  libjpeg62-turbo-dev  # QR images: JPEG in (a phone's photo of a code)
  zlib1g-dev           # raw DEFLATE for compressed QR payloads (sce1:)
  avahi-daemon avahi-utils dbus iproute2 procps
  openssl qrencode zbar-tools sqlite3 curl
  python3-venv
  man-db               # tests: the installed man pages render (man -l) and have whatis entries (lexgrog)
  nftables             # tests: doctor against a firewall in a test's own network namespace
  chromium chromium-driver  # tests: the web app (nearcard ui) in a real headless browser
  xvfb dunst libnotify-bin  # tests: nearcard ui's desktop notifications on a real notification daemon
  postgresql postgresql-client  # tests: the fleet store (--store postgres://…) on a throw-away server
  radicale xandikos    # tests: contacts synced to two different CardDAV servers (nearcard addressbook)
  libsecret-tools gnome-keyring  # addressbook add --secret-service (secret-tool); tests: a real GNOME Keyring
  ca-certificates      # tests: the CardDAV servers' throw-away CA in the system trust store (update-ca-certificates)
  eslint               # make lint: the web app's script (Sources/NearcardWeb/Assets/app.js)
  gettext              # msgfmt, msgmerge: the catalogs under po/ (make lint checks them; make install compiles them)
)

for arg in "$@"; do
  [ "$arg" = "--with-packaging" ] && packages+=(lintian)
done

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "install-deps: missing packages: ${missing[*]}; run as root or: sudo apt-get install ${missing[*]}" >&2
    exit 1
  fi
  echo "install-deps: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  # Start-up scripts of daemons must not run inside the installer (no init here).
  policy=/usr/sbin/policy-rc.d
  created_policy=0
  if [ ! -e "$policy" ]; then printf '#!/bin/sh\nexit 101\n' > "$policy"; chmod +x "$policy"; created_policy=1; fi
  apt-get update -qq || apt-get update
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
  [ "$created_policy" = 1 ] && rm -f "$policy"
fi

for arg in "$@"; do
  [ "$arg" = "--with-python" ] && scripts/setup-python.sh
done
exit 0
