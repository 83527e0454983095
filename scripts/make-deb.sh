#!/usr/bin/env bash
# Builds the Debian package of nearcard from a built binary, and checks it with lintian.
# Usage: scripts/make-deb.sh BINARY OUTDIR
# Prints the path of the .deb. Its Depends are the Debian packages that provide the libraries the
# binary links (found with dpkg -S), plus avahi-daemon; a library no package provides (a Swift runtime
# library of a debug build) is an error: package the release build (make deb does).
set -euo pipefail
cd "$(dirname "$0")/.."
binary=$(readlink -f "$1") out=$2
version=$("$binary" --version)
arch=$(dpkg --print-architecture)
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
root="$stage/nearcard_${version}_$arch"

# Full RELRO (make release links with -z now): lintian's hardening-no-bindnow.
if ! readelf -d "$binary" | grep -Eq 'BIND_NOW|FLAGS.*NOW'; then
  echo "make-deb: $binary is not linked with -z now (full RELRO): build it with make release" >&2
  exit 1
fi

scripts/install.sh "$binary" "$root" /usr

# The units must verify with the package's paths: systemd-analyze checks that what they run exists, so
# each is checked with /usr/ read inside the staged package.
if command -v systemd-analyze >/dev/null; then
  for unit in "$root"/usr/share/doc/nearcard/examples/nearcard-bot.service "$root"/usr/share/doc/nearcard/examples/desktop/nearcard-ui.service; do
    grep -q /usr/local/ "$unit" && { echo "make-deb: $unit names /usr/local" >&2; exit 1; }
    staged="$stage/$(basename "$unit")"
    sed "s|/usr/bin/nearcard|$root/usr/bin/nearcard|g; s|file:///usr/|file://$root/usr/|g" "$unit" > "$staged"
    systemd-analyze verify "$staged" >&2 || { echo "make-deb: $(basename "$unit") does not verify" >&2; exit 1; }
    rm -f "$staged"
  done
fi

# Debian's own files for a native package.
doc="$root/usr/share/doc/nearcard"
cat > "$doc/copyright" <<COPYRIGHT
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: nearcard
Comment: No licence has been chosen for Nearcard yet; until one is, all rights are reserved.

Files: *
Copyright: 2026 The Nearcard developers
License: none
 No licence has been granted yet.
COPYRIGHT
{
  echo "nearcard ($version) unstable; urgency=medium"
  echo
  echo "  * Package built from $(git rev-parse --short HEAD 2>/dev/null || echo 'a source tree')."
  echo
  echo " -- The Nearcard developers <nearcard@example.org>  $(date -R -d "@$(git log -1 --format=%ct 2>/dev/null || date +%s)")"
} | gzip -9n > "$doc/changelog.gz"
chmod 0644 "$doc/copyright" "$doc/changelog.gz"

# Depends: the package of every shared library the binary links directly (its NEEDED entries), and of
# the ones its C loaders open on first use (dlopen: CZBar, CAvahi, CXML; docs/ARCHITECTURE.md), at
# least the version installed here.
loaded_on_use=$(grep -ho 'nearcard_load("[^"]*"' Sources/C*/*.c | sed 's/.*"\(.*\)"/\1/' | sort -u)
depends=()
missing=()
while read -r lib path; do
  [ -n "$path" ] || { missing+=("$lib"); continue; }
  pkg=$(dpkg -S "$(readlink -f "$path")" 2>/dev/null | head -1 | cut -d: -f1) || pkg=
  [ -n "$pkg" ] || pkg=$(dpkg -S "$path" 2>/dev/null | head -1 | cut -d: -f1) || pkg=
  if [ -z "$pkg" ]; then missing+=("$lib"); continue; fi
  ver=$(dpkg-query -W -f='${Version}' "$pkg" | sed 's/-[^-]*$//')
  depends+=("$pkg (>= $ver)")
done < <(
  ldd "$binary" | awk -v needed="$(readelf -d "$binary" | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p' | paste -sd' ')" '
    BEGIN { n = split(needed, list, " "); for (i = 1; i <= n; i++) want[list[i]] = 1 }
    /=>/ && ($1 in want) { print $1, ($3 == "not" ? "" : $3) }'
  for lib in $loaded_on_use; do
    echo "$lib $(ldconfig -p | awk -v lib="$lib" '$1 == lib { print $NF; exit }')"
  done)
if [ ${#missing[@]} -gt 0 ]; then
  echo "make-deb: no Debian package provides ${missing[*]}: package the release build (make deb)" >&2
  exit 1
fi
depends+=("avahi-daemon")
depends_line=$(printf '%s\n' "${depends[@]}" | sort -u | paste -sd, | sed 's/,/, /g')

# zlib 1.3 is compiled into the binary by swift-nio-extras (CNIOExtrasZlib), the HTTP decompression of
# AsyncHTTPClient that posts a bot's webhooks; Swift packages build their C parts statically. Debian's
# own libz is linked too (PNG, compressed QR payloads) and is in Depends.
install -d -m 0755 "$root/usr/share/lintian/overrides"
# The binary is Swift: _FORTIFY_SOURCE guards C's string and memory functions, which Swift code does not
# call (its buffers are bounds-checked by the language); the C the binary carries comes compiled by the
# Swift packages (BoringSSL, zlib) with their own build flags. docs/SECURITY.md "Hardening".
cat > "$root/usr/share/lintian/overrides/nearcard" <<OVERRIDES
nearcard: embedded-library zlib [usr/bin/nearcard]
nearcard: hardening-no-fortify-functions [usr/bin/nearcard]
OVERRIDES
chmod 0644 "$root/usr/share/lintian/overrides/nearcard"

install -d -m 0755 "$root/DEBIAN"
cat > "$root/DEBIAN/control" <<CONTROL
Package: nearcard
Version: $version
Architecture: $arch
Maintainer: The Nearcard developers <nearcard@example.org>
Installed-Size: $(du -sk --exclude=DEBIAN "$root" | cut -f1)
Depends: $depends_line
Recommends: xdg-utils, libnotify-bin, libsecret-tools
Section: net
Priority: optional
Homepage: https://example.org/nearcard
Description: exchange signed business cards in person on the local network
 Nearcard finds other Nearcard nodes on the LAN over DNS-SD (avahi-daemon),
 authenticates them with a Noise handshake and a check code both people
 compare, and exchanges signed, selectively disclosed business cards. Cards
 also travel as QR codes compatible with the iOS app. Headless exchange bots
 run from a JSON policy under systemd.
CONTROL

install -d "$out"
deb="$out/nearcard_${version}_$arch.deb"
dpkg-deb --root-owner-group -Zxz --build "$root" "$deb" >/dev/null
if command -v lintian >/dev/null; then
  lintian --fail-on error "$deb" >&2
else
  echo "make-deb: lintian is not installed; the package was not checked (scripts/install-deps.sh --with-packaging)" >&2
fi
echo "$deb"
