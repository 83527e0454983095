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
# The man pages and the command list are read from the binary's own help: in English, whatever the
# installing person's language (the catalogs below translate it at run time).
export LC_ALL=C.UTF-8
unset LANGUAGE
binary=$1 destdir=$2 prefix=$3
root="$destdir$prefix"
[ -x "$binary" ] || { echo "install.sh: $binary is not an executable (build it first: make release)" >&2; exit 1; }

install -D -m 0755 "$binary" "$root/bin/nearcard"
strip --strip-unneeded --remove-section=.comment --remove-section=.note "$root/bin/nearcard"

# The translations (po/LANG.po, docs/TRANSLATING.md), compiled where gettext's tools and the binary look:
# PREFIX/share/locale/LANG/LC_MESSAGES/nearcard.mo. They win over the copies built into the binary.
for po in po/*.po; do
  lang=$(basename "$po" .po)
  install -d -m 0755 "$root/share/locale/$lang/LC_MESSAGES"
  msgfmt --check -o "$root/share/locale/$lang/LC_MESSAGES/nearcard.mo" "$po"
  chmod 0644 "$root/share/locale/$lang/LC_MESSAGES/nearcard.mo"
done

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
version=$("$root/bin/nearcard" --version)
for page in "$tmp"/*.1; do
  name=$(basename "$page" .1)
  sed -i -e "0,/^\.Nm \".*\"\$/s//.Nm $name/" -e "s/^\.Nm\$/.Nm ${name//./ }/" -e 's/^$/.Pp/' "$page"
  # The footer and header name Nearcard, not BSD (mdoc's default .Os); `code` in the help text is bold
  # in a page, not two backticks.
  sed -i -e "s/^\.Os\$/.Os Nearcard $version/" -e 's/^\.Dt /.ds doc-volume-operating-system Nearcard\n.Dt /' \
    -e 's/`\([^`]*\)`/\\fB\1\\fR/g' "$page"
  if [ "$name" = nearcard ]; then
    # The top page lists the commands (from the binary's own help) and the exit statuses (README's
    # table), instead of one paragraph of codes and "exits >0 if an error occurs".
    {
      echo ".Sh COMMANDS"
      echo ".Bl -tag -width 12n"
      "$root/bin/nearcard" --help | sed -n '/^SUBCOMMANDS:/,/^$/p' | sed '1d;/^$/d' |
        awk '/^  [a-z]/ { if (cmd) print ".It Cm " cmd "\n" text; cmd=$1; $1=""; sub(/^ +/, ""); text=$0; next }
             { sub(/^ +/, ""); text = text " " $0 }
             END { if (cmd) print ".It Cm " cmd "\n" text }' | sed 's/ (default)$//'
      echo ".El"
      echo ".Pp"
      echo "See"
      echo ".Xr nearcard.COMMAND 1"
      echo "for each."
    } > "$tmp/commands"
    {
      echo ".Bl -tag -width 4n"
      grep -E '^\| [0-9]+ \|' README.md | sed -E 's/^\| ([0-9]+) \| (.*) \|$/.It \1\n\2/' | sed 's/`\([^`]*\)`/\\fB\1\\fR/g'
      echo ".El"
    } > "$tmp/exits"
    awk -v commands="$tmp/commands" -v exits="$tmp/exits" '
      /^Exit codes: / { skip = 1 }
      skip && /^\.Bl/ { skip = 0 }
      skip { next }
      /^\.Sh "EXIT STATUS"/ { while ((getline l < commands) > 0) print l; print; while ((getline l < exits) > 0) print l; getline; next }
      { print }' "$page" > "$page.new" && mv "$page.new" "$page"
  fi
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
