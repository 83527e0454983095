#!/usr/bin/env bash
# Installs a built nearcard binary the way Linux tools are installed: the binary (stripped), a man page
# per command (generated from the argument parser), bash/zsh/fish completions, and the docs and example
# units. Used by `make install` and `make deb`.
# Usage: scripts/install.sh BINARY DESTDIR PREFIX
#   BINARY   the nearcard executable to install (make install passes the release build)
#   DESTDIR  staging root ("" installs for real)
#   PREFIX   e.g. /usr/local (make install) or /usr (the Debian package)
set -euo pipefail
cd "$(dirname "$0")/.."
binary=$1 destdir=$2 prefix=$3
root="$destdir$prefix"
[ -x "$binary" ] || { echo "install.sh: $binary is not an executable (build it first: make release)" >&2; exit 1; }

install -D -m 0755 "$binary" "$root/bin/nearcard"
strip --strip-unneeded --remove-section=.comment --remove-section=.note "$root/bin/nearcard"

# Man pages: swift-argument-parser's generate-manual reads the binary's own help (GENERATE_MANUAL names
# a built one; otherwise it is built here). The date is the last commit's: the same tree, the same pages.
generator=${GENERATE_MANUAL:-}
if [ -z "$generator" ]; then
  swift build --product generate-manual >/dev/null
  generator="$(swift build --show-bin-path)/generate-manual"
fi
date=$(git log -1 --format=%cs 2>/dev/null || date -u +%F)
man="$root/share/man/man1"
install -d -m 0755 "$man"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$generator" "$root/bin/nearcard" --multi-page --date "$date" --authors "The Nearcard developers" -o "$tmp"
# Each page's NAME is its file's name (nearcard.store.info, what `man` and `apropos` take: the generator's
# "nearcard store info" is no whatis entry), its SYNOPSIS the command as typed, and a blank line a
# paragraph break (.Pp): lintian's bad-whatis-entry and groff-message.
for page in "$tmp"/*.1; do
  name=$(basename "$page" .1)
  sed -i -e "0,/^\.Nm \".*\"\$/s//.Nm $name/" -e "s/^\.Nm\$/.Nm ${name//./ }/" -e 's/^$/.Pp/' "$page"
  gzip -9n < "$page" > "$man/$(basename "$page").gz"
  chmod 0644 "$man/$(basename "$page").gz"
done

# Completions, where bash-completion, zsh and fish look for a vendor's.
# (A completion file is sourced, not run: no #! line.)
"$root/bin/nearcard" --generate-completion-script bash | sed '1{/^#!/d}' > "$tmp/bash"
"$root/bin/nearcard" --generate-completion-script zsh > "$tmp/zsh"
"$root/bin/nearcard" --generate-completion-script fish > "$tmp/fish"
install -D -m 0644 "$tmp/bash" "$root/share/bash-completion/completions/nearcard"
install -D -m 0644 "$tmp/zsh" "$root/share/zsh/vendor-completions/_nearcard"
install -D -m 0644 "$tmp/fish" "$root/share/fish/vendor_completions.d/nearcard.fish"

# Docs and the example bot (policy and systemd units).
doc="$root/share/doc/nearcard"
install -d -m 0755 "$doc" "$doc/examples"
install -m 0644 README.md docs/*.md "$doc/"
install -m 0644 examples/bot/README.md examples/bot/policy.json "$doc/examples/"
install -m 0755 examples/bot/run-bot.sh "$doc/examples/"
# The unit names the binary and docs where this install puts them (the repository's says /usr/local).
sed "s|/usr/local/|$prefix/|g" examples/bot/nearcard-bot.service > "$tmp/nearcard-bot.service"
install -m 0644 "$tmp/nearcard-bot.service" "$doc/examples/"
install -d -m 0755 "$doc/examples/desktop"
for f in examples/desktop/*; do
  sed "s|/usr/local/|$prefix/|g" "$f" > "$tmp/$(basename "$f")"
  install -m 0644 "$tmp/$(basename "$f")" "$doc/examples/desktop/"
done
# The menu entry and its icon, where desktops look for them.
install -D -m 0644 examples/desktop/nearcard.desktop "$root/share/applications/nearcard.desktop"
install -D -m 0644 examples/desktop/nearcard.svg "$root/share/icons/hicolor/scalable/apps/nearcard.svg"
