#!/usr/bin/env python3
"""Writes po/nearcard.pot: every message the sources hand to a Translator, with where it is used.

    scripts/po-extract.py [--check]

A message is the first string literal of `t("…")`, `t("…", context: "…")`, `t.plural("…", "…", …)`
or `N_("…")` (a message marked where it is made and translated where it is shown) in the Swift sources and the web app's script (single-line literals, the call itself may span lines,
their escapes as Swift writes them; in Swift also a multi-line literal `t(\"\"\"…\"\"\")`, as Swift reads it), and each text between tags and each `aria-label`, `placeholder`,
`alt` and `title` of the web app's page (Sources/NearcardWeb/Assets/index.html, translated by the node
as it serves it: WebAssets.translated) that has a letter in it (not within <code>, and not a lower-case
word alone such as a format's name). Placeholders are positional (`%1$@`, `%2$ld`), marked objc-format
so that `msgfmt --check` holds each translation to the same ones.
--check: exit 1, saying so, when po/nearcard.pot is not what the sources give (run without it to update).
"""
import html.parser
import os
import re
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
LITERAL = r'"((?:[^"\\\n]|\\.)*)"'
MULTILINE = re.compile(r'\b(?:t|N_|Phrase)\(\s*"""\n(.*?)\n([ \t]*)"""', re.S)
CALL = re.compile(r'\b(?:t|N_|Phrase)(?:\.plural)?\(\s*(?!\"\"\")' + LITERAL + r'(?:\s*,\s*' + LITERAL + r')?(?:[^)\n]*?context:\s*' + LITERAL + r')?')
PLURAL = re.compile(r'\bt\.plural\(')


def multiline(body, indent):
    """A Swift multi-line literal's body (between the line after its opening and its closing delimiter) as a
    single-line literal's body: the closing delimiter's indentation stripped from each line, a line ending in
    a backslash joined to the next, quotes escaped, newlines written \\n."""
    lines = [line[len(indent):] if line.startswith(indent) else line.lstrip() for line in body.split("\n")]
    text = ""
    for n, line in enumerate(lines):
        backslashes = len(line) - len(line.rstrip("\\"))
        if backslashes % 2 == 1:
            text += line[:-1]
        else:
            text += line + ("\\n" if n < len(lines) - 1 else "")
    return re.sub(r'(?<!\\)"', '\\"', text)


def po_escape(swift):
    """A Swift literal's body as a PO string's body (both escape \\ and \" alike; \\u{…} is written out)."""
    text = re.sub(r"\\u\{([0-9a-fA-F]+)\}", lambda m: chr(int(m.group(1), 16)), swift)
    return text.replace("\\(", "(")  # an interpolation has no place in a message: it is refused below


def messages():
    found = {}
    for base, _, files in sorted(os.walk(os.path.join(ROOT, "Sources"))):
        for name in sorted(files):
            if name == "index.html" and base.endswith(os.path.join("NearcardWeb", "Assets")):
                rel = os.path.relpath(os.path.join(base, name), ROOT)
                for text in page_messages(open(os.path.join(base, name), encoding="utf-8").read()):
                    found.setdefault((None, text.replace("\\", "\\\\").replace('"', '\\"'), None), []).append(rel)
                continue
            if not (name.endswith(".swift") or name == "app.js"):
                continue
            path = os.path.join(base, name)
            rel = os.path.relpath(path, ROOT)
            text = open(path, encoding="utf-8").read()
            for m in MULTILINE.finditer(text):
                number = text.count("\n", 0, m.start()) + 1
                body = multiline(m.group(1), m.group(2))
                if "\\(" in body:
                    sys.exit(f"{rel}:{number}: a message with an interpolation; use a placeholder (%1$@) and pass the value")
                key = (None, body, None)
                if rel not in found.setdefault(key, []):
                    found[key].append(rel)
            for m in CALL.finditer(text):
                number = text.count("\n", 0, m.start()) + 1
                singular, plural, context = m.group(1), m.group(2), m.group(3)
                is_plural = bool(PLURAL.match(text, m.start()))
                if "\\(" in singular or (is_plural and "\\(" in plural):
                    sys.exit(f"{rel}:{number}: a message with an interpolation; use a placeholder (%1$@) and pass the value")
                key = (context, singular, plural if is_plural else None)
                # Where it is used, by file (as xgettext --add-location=file): the template does not
                # change each time a line moves.
                if rel not in found.setdefault(key, []):
                    found[key].append(rel)
    return found


class Page(html.parser.HTMLParser):
    """The page's translatable texts and attribute values, in order."""

    ATTRIBUTES = ("aria-label", "placeholder", "alt", "title")

    def __init__(self):
        super().__init__(convert_charrefs=False)
        self.texts, self.skipping = [], 0

    def handle_starttag(self, tag, attrs):
        if tag in ("code", "script", "style"):
            self.skipping += 1
        for k, v in attrs:
            if k in self.ATTRIBUTES and v:
                self.add(v)

    def handle_endtag(self, tag):
        if tag in ("code", "script", "style"):
            self.skipping -= 1

    def handle_data(self, data):
        if not self.skipping:
            self.add(data.strip())

    def add(self, text):
        if not any(c.isalpha() for c in text) or (" " not in text and text == text.lower()):
            return
        if text not in self.texts:
            self.texts.append(text)


def page_messages(text):
    p = Page()
    p.feed(text)
    return p.texts


def pot(found):
    out = ['msgid ""', 'msgstr ""', '"Project-Id-Version: nearcard\\n"', '"MIME-Version: 1.0\\n"', '"Content-Type: text/plain; charset=UTF-8\\n"',
           '"Content-Transfer-Encoding: 8bit\\n"', '"Plural-Forms: nplurals=INTEGER; plural=EXPRESSION;\\n"', ""]
    for (context, singular, plural), where in sorted(found.items(), key=lambda kv: kv[1][0]):
        out += ["#: " + " ".join(where)]
        if "%" in singular:
            out += ["#, objc-format"]
        if context:
            out += [f'msgctxt "{po_escape(context)}"']
        out += [f'msgid "{po_escape(singular)}"']
        if plural:
            out += [f'msgid_plural "{po_escape(plural)}"', 'msgstr[0] ""', 'msgstr[1] ""']
        else:
            out += ['msgstr ""']
        out += [""]
    return "\n".join(out)


def main():
    text = pot(messages())
    target = os.path.join(ROOT, "po", "nearcard.pot")
    if "--check" in sys.argv[1:]:
        current = open(target, encoding="utf-8").read() if os.path.exists(target) else ""
        if current != text:
            sys.exit("po/nearcard.pot is out of date with the sources: run scripts/po-extract.py (then msgmerge each po/*.po)")
        return
    os.makedirs(os.path.dirname(target), exist_ok=True)
    with open(target, "w", encoding="utf-8") as f:
        f.write(text)


if __name__ == "__main__":
    main()
