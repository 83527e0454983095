#!/usr/bin/env python3
"""Reads a vCard file as two address-book tools do, and prints what each understood (one JSON object).

  vcard_check.py FILE.vcf

- vobject (the parser Radicale and khard use): for each card, FN, N (family, given), every URL,
  PRONOUNS (RFC 9554), every SOCIALPROFILE (its SERVICE-TYPE, USERNAME, VALUE and value) and whether
  a PHOTO is there (its media type, and the byte length of its data: URI).
- khard (a command-line address book): the cards are put in a throw-away vdir, one file each, with a
  khard configuration of its own; for each card `khard show --format yaml` is read back (its first and
  last name, and its web pages).

Exit 0 when both read every card; 1 (with the error) otherwise.
"""
import base64
import json
import os
import re
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True
import vobject  # noqa: E402
from ruamel.yaml import YAML  # noqa: E402  (khard's own dependency)


def values(card, key):
    return [line for line in card.contents.get(key, [])]


def photo(card, raw):
    """PHOTO as vobject reads it (its media type), and the bytes of the data: URI. vobject 0.9.9 reads
    PHOTO as text, which cuts a 4.0 data: URI at its comma (`data:image/jpeg;base64`): the bytes are
    then taken from the card's unfolded PHOTO line itself."""
    lines = values(card, "photo")
    if not lines:
        return None
    value = lines[0].value if isinstance(lines[0].value, str) else ""
    m = re.match(r"data:([^;,]+);base64", value)
    if not m:
        return {"uri": value[:40]}
    unfolded = re.sub(r"\r?\n[ \t]", "", raw)
    data = re.search(r"^PHOTO[^:]*:data:[^,]*,([A-Za-z0-9+/=]+)\r?$", unfolded, re.M)
    return {"mediaType": m.group(1), "bytes": len(base64.b64decode(data.group(1))) if data else 0}


def with_vobject(text):
    out = []
    raws = re.findall(r"BEGIN:VCARD.*?END:VCARD\r?\n", text, re.S)
    for raw, card in zip(raws, vobject.readComponents(text)):
        n = card.contents.get("n")
        out.append({
            "fn": card.fn.value,
            "family": n[0].value.family if n else None,
            "given": n[0].value.given if n else None,
            "urls": [u.value for u in values(card, "url")],
            "pronouns": [p.value for p in values(card, "pronouns")],
            "socialProfiles": [{"serviceType": s.params.get("SERVICE-TYPE", [None])[0], "username": s.params.get("USERNAME", [None])[0],
                                "valueType": s.params.get("VALUE", ["uri"])[0], "value": s.value} for s in values(card, "socialprofile")],
            "photo": photo(card, raw),
        })
    return out


def with_khard(text):
    cards = re.findall(r"BEGIN:VCARD.*?END:VCARD\r?\n", text, re.S)
    with tempfile.TemporaryDirectory() as d:
        book = os.path.join(d, "book")
        os.mkdir(book)
        for i, c in enumerate(cards):
            with open(os.path.join(book, "%d.vcf" % i), "w", newline="") as f:
                f.write(c)
        conf = os.path.join(d, "khard.conf")
        with open(conf, "w") as f:
            f.write("[addressbooks]\n[[book]]\npath = %s\n[general]\ndefault_action = list\n" % book)
        khard = os.path.join(os.path.dirname(sys.executable), "khard")
        env = dict(os.environ, HOME=d, XDG_CONFIG_HOME=d)
        out = []
        for card in vobject.readComponents(text):
            # (Searched by the formatted name: the cards a test gives it have distinct ones.)
            r = subprocess.run([khard, "-c", conf, "show", "--format", "yaml", card.fn.value],
                               capture_output=True, text=True, env=env, timeout=60, stdin=subprocess.DEVNULL)
            if r.returncode != 0:
                raise RuntimeError("khard show %s: %s" % (card.fn.value, r.stderr.strip()))
            shown = YAML(typ="safe").load(r.stdout)
            pages = shown.get("Webpage")
            out.append({"fn": shown.get("Formatted name"), "firstName": shown.get("First name"), "lastName": shown.get("Last name"),
                        "webpages": pages if isinstance(pages, list) else ([pages] if pages else [])})
        return out


def main():
    text = open(sys.argv[1], encoding="utf-8").read()
    try:
        report = {"vobject": with_vobject(text), "khard": with_khard(text)}
    except Exception as e:  # noqa: BLE001
        print(json.dumps({"error": "%s: %s" % (type(e).__name__, e)}))
        return 1
    print(json.dumps(report, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
