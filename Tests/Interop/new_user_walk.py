#!/usr/bin/env python3
"""A new person's first and second hour with Nearcard, from the Debian package, as an ordinary account.

  new_user_walk.py [DEB]        (`make walk`; DEB defaults to the newest build/nearcard_*.deb)

As root it installs the package (dpkg -i), then walks as the account nearcard-test (made if missing)
with a fresh $HOME, at an 80×24 terminal (pexpect), the way issue 35 describes the first hour:
  1. `nearcard init --name …` asks for a passphrase, twice, and seals the keys;
  2. `nearcard card set …`;
  3. `nearcard listen` asks for the passphrase once, and listens;
  4. `nearcard qr make` in 80×24, with the node listening, draws one code (an invitation: no card code
     fits 80×24) that zbar reads from the terminal's drawing, and that another person's exchange uses;
  5. a second `nearcard ui` on the same home says a node runs there already (one node per home);
  6. another person (a second home) exchanges cards with the running node: both have each other;
  7. the walker, its node stopped, dials the other person's node: the passphrase once, exit 0;
  8. the bot example the package installs (/usr/share/doc/nearcard/examples/run-bot.sh) starts and
     an exchange with it completes.
The second hour (issue 51):
  9. the other person, who made their keys without a passphrase, adds one later (`nearcard id
     passphrase`, asked twice) and their next signed command asks for it;
 10. `nearcard qr make` in a 100×40 window draws one card code, never frames; rendered from the
     terminal's characters it is read by zbar, and the other person's `qr scan` keeps the walker's card;
 11. an address book (Radicale with TLS on loopback, Tests/Interop/carddav_lab.py) added under
     https://localhost:PORT/ and again under https://127.0.0.1:PORT/: the second is refused, naming the first.
In their own language (issue 52):
 12. the package installed its catalogs under /usr/share/locale, and `LANGUAGE=de nearcard --help` is German.
Everything is on loopback, discovery off. Each step that trips prints one line naming it; the walk
prints a JSON report and exits 0 when every step went as a person expects, 1 otherwise. The package is
removed (dpkg -r) and the temporary home deleted at the end, whatever happened.
"""
import glob
import json
import os
import pwd
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import pexpect

USER = "nearcard-test"
# The package's binary, whatever else is on $PATH (a `make install` in /usr/local).
NEARCARD = "/usr/bin/nearcard"
PASSPHRASE = "correct horse battery staple"
report = {"steps": [], "ok": False}
children = []


def trip(step, why):
    report["steps"].append({"step": step, "ok": False, "why": why})
    print(f"new-user walk: step {step} tripped: {why}", file=sys.stderr)
    raise SystemExit(1)


def passed(step, **facts):
    report["steps"].append({"step": step, "ok": True, **facts})


def account():
    try:
        return pwd.getpwnam(USER)
    except KeyError:
        subprocess.run(["useradd", "--create-home", "--shell", "/bin/bash", USER], check=True)
        return pwd.getpwnam(USER)


def main():
    debs = sys.argv[1:] or sorted(glob.glob("build/nearcard_*.deb"), key=os.path.getmtime)
    if not debs:
        print("new-user walk: no build/nearcard_*.deb: run make deb first", file=sys.stderr)
        raise SystemExit(2)
    deb = debs[-1]
    who = account()
    tmp = tempfile.mkdtemp(prefix="nearcard-walk-")
    os.chmod(tmp, 0o755)
    home = os.path.join(tmp, "home")
    os.makedirs(home)
    os.chown(home, who.pw_uid, who.pw_gid)
    subprocess.run(["dpkg", "-i", deb], check=True, stdout=subprocess.DEVNULL)
    try:
        walk(home)
        report["ok"] = True
    finally:
        for c in children:
            if c.isalive():
                c.kill(signal.SIGKILL)
        subprocess.run(["pkill", "-u", USER, "-f", "/usr/bin/nearcard"], check=False)
        subprocess.run(["dpkg", "-r", "nearcard"], check=False, stdout=subprocess.DEVNULL)
        shutil.rmtree(tmp, ignore_errors=True)
        print(json.dumps(report))


def spawn(args, home, env=None, timeout=30):
    """A command as the walker, at an 80×24 terminal, with a fresh $HOME (its default Nearcard home)."""
    extra = [f"{k}={v}" for k, v in (env or {}).items()]
    child = pexpect.spawn("runuser", ["-u", USER, "--", "env", f"HOME={home}", "LANG=C.UTF-8", *extra, *args],
                          dimensions=(24, 80), timeout=timeout, encoding="utf-8", codec_errors="replace")
    children.append(child)
    return child


def run(args, home, env=None, timeout=60):
    child = spawn(args, home, env, timeout)
    try:
        out = child.read()
    except pexpect.TIMEOUT:
        out = (child.before or "") + f" (still running after {timeout} s)"
        child.kill(signal.SIGKILL)
    child.close()
    return child.exitstatus, out


def walk(home):
    # 1. init asks for a passphrase twice and seals the keys.
    c = spawn([NEARCARD, "init", "--name", "Nova Newcomer"], home)
    for _ in range(2):
        if c.expect([r"[Pp]assphrase", pexpect.EOF]) != 0:
            trip(1, f"init did not ask for a passphrase: {c.before!r}")
        c.sendline(PASSPHRASE)
    c.expect(pexpect.EOF)
    c.close()
    if c.exitstatus != 0:
        trip(1, f"init exited {c.exitstatus}: {c.before[-300:]!r}")
    passed(1)
    # 2. A card.
    code, out = run([NEARCARD, "card", "set", "--name", "Nova Newcomer", "--email", "nova@example.org"], home)
    if code != 0:
        trip(2, f"card set exited {code}: {out[-300:]!r}")
    passed(2)
    # 3. listen asks for the passphrase once and listens.
    # On loopback alone: the invitation of step 4 names 127.0.0.1.
    listen = spawn([NEARCARD, "listen", "--no-discovery", "--interface", "lo", "--port", "0", "--accept", "all"], home)
    if listen.expect([r"[Pp]assphrase", pexpect.EOF, pexpect.TIMEOUT]) != 0:
        trip(3, f"listen did not ask for the passphrase: {listen.before!r}")
    listen.sendline(PASSPHRASE)
    if listen.expect([r"Listening on port (\d+)", r"[Pp]assphrase", pexpect.EOF, pexpect.TIMEOUT]) != 0:
        trip(3, f"one passphrase did not start listen: {listen.before[-300:]!r}")
    port = int(listen.match.group(1))
    passed(3, port=port)
    # 4. qr make in 80×24 with the node listening: one code (an invitation), read by zbar from the drawing.
    drawn = terminal([NEARCARD, "qr", "make"], home, 24, 80)
    if "frame " in drawn or "Invitation to exchange with Nova Newcomer" not in drawn:
        trip(4, f"qr make in 80×24 did not show one invitation: {drawn[-400:]!r}")
    invitation = zbar(drawn)
    if not invitation.startswith("nearcard-invite:"):
        trip(4, f"zbar did not read an invitation from the terminal's drawing: {invitation!r}")
    passed(4)
    # 5. A second ui on the same home says a node runs there already.
    code, out = run([NEARCARD, "ui", "--no-browser", "--port", "0"], home, timeout=20)
    if "already has a running node" not in out or "nearcard listen" not in out:
        trip(5, f"a second ui on a served home (exit {code}): {out[-300:]!r}")
    passed(5, exit=code)
    # 6. Another person exchanges with the running node; both books hold each other.
    other = {"NEARCARD_HOME": os.path.join(home, "other-person")}
    for args in ([NEARCARD, "init", "--name", "Otto Other", "--no-passphrase"],
                 [NEARCARD, "card", "set", "--name", "Otto Other", "--company", "Elsewhere Ltd", "--email", "otto@example.org"],
                 # (The example bot asks for an email: its policy's requireFields.)
                 [NEARCARD, "share", "--fields", "name,company,email"]):
        code, out = run(args, home, other)
        if code != 0:
            trip(6, f"{' '.join(args[1:3])} for the other person exited {code}: {out[-200:]!r}")
    # By the invitation the walker's terminal showed (step 4): no check code to compare.
    code, out = run([NEARCARD, "exchange", "--invite", invitation], home, other)
    if code != 0:
        trip(6, f"the other person's exchange by the terminal's invitation exited {code}: {out[-300:]!r}")
    if listen.expect([r"Exchanged cards with Otto Other", pexpect.EOF, pexpect.TIMEOUT]) != 0:
        trip(6, f"listen did not say the exchange: {listen.before[-300:]!r}")
    passed(6)
    listen.sendcontrol("c")
    listen.expect([pexpect.EOF, pexpect.TIMEOUT])
    # 7. The other way: the walker dials the other person's node; one passphrase.
    theirs = spawn([NEARCARD, "listen", "--no-discovery", "--port", "0", "--accept", "all"], home, other)
    if theirs.expect([r"Listening on port (\d+)", pexpect.EOF, pexpect.TIMEOUT]) != 0:
        trip(7, f"the other person's listen did not start: {theirs.before[-300:]!r}")
    their_port = int(theirs.match.group(1))
    dial = spawn([NEARCARD, "exchange", f"127.0.0.1:{their_port}", "--yes"], home)
    asked = 0
    while True:
        i = dial.expect([r"[Pp]assphrase", pexpect.EOF, pexpect.TIMEOUT])
        if i != 0:
            break
        asked += 1
        dial.sendline(PASSPHRASE)
    dial.close()
    if dial.exitstatus != 0 or asked != 1:
        trip(7, f"exchange exited {dial.exitstatus} after {asked} passphrase prompt(s): {dial.before[-300:]!r}")
    theirs.sendcontrol("c")
    theirs.expect([pexpect.EOF, pexpect.TIMEOUT])
    passed(7)
    # 8. The packaged bot example starts, and an exchange with it completes.
    bot_home = os.path.join(home, "booth")
    bot = spawn(["/usr/share/doc/nearcard/examples/run-bot.sh", bot_home, "--no-discovery"], home, {"PORT": "0", "NEARCARD": NEARCARD}, timeout=30)
    if bot.expect([r'"event":"started"[^\n]*"port":(\d+)', pexpect.EOF, pexpect.TIMEOUT]) != 0:
        trip(8, f"the packaged bot did not start: {bot.before[-400:]!r}")
    bot_port = int(bot.match.group(1))
    code, out = run([NEARCARD, "exchange", f"127.0.0.1:{bot_port}", "--yes"], home, other)
    if code != 0 or not re.search(r"Nearcard Booth", out):
        trip(8, f"an exchange with the packaged bot exited {code}: {out[-300:]!r}")
    bot.sendcontrol("c")
    bot.expect([pexpect.EOF, pexpect.TIMEOUT])
    passed(8)
    second_hour(home, other)


def second_hour(home, other):
    # 9. A passphrase added after init (the other person's keys were made without one).
    c = spawn([NEARCARD, "id", "passphrase"], home, other)
    for _ in range(2):
        if c.expect([r"[Pp]assphrase[^:]*: ", pexpect.EOF, pexpect.TIMEOUT]) != 0:
            trip(9, f"id passphrase did not ask twice: {c.before!r}")
        c.sendline("a later passphrase")
    c.expect([pexpect.EOF, pexpect.TIMEOUT])
    c.close()
    if c.exitstatus != 0 or "now sealed" not in (c.before or ""):
        trip(9, f"id passphrase exited {c.exitstatus}: {(c.before or '')[-300:]!r}")
    # A signed code (zk) needs the keys: the new passphrase is asked, and opens them.
    signed = spawn([NEARCARD, "qr", "make", "--format", "zk", "--text"], home, other)
    if signed.expect([r"[Pp]assphrase", pexpect.EOF, pexpect.TIMEOUT]) != 0:
        trip(9, f"a signed command did not ask for the new passphrase: {signed.before!r}")
    signed.sendline("a later passphrase")
    signed.expect([pexpect.EOF, pexpect.TIMEOUT])
    signed.close()
    if signed.exitstatus != 0:
        trip(9, f"qr make --format zk with the new passphrase exited {signed.exitstatus}: {(signed.before or '')[-300:]!r}")
    passed(9)
    # 10. One card code in a 100×40 window, read by zbar from the drawing, scanned by the other person.
    drawn = terminal([NEARCARD, "qr", "make"], home, 40, 100)
    if "frame " in drawn or "the smallest code of your card" not in drawn:
        trip(10, f"qr make in 100×40 did not show one card code: {drawn[-400:]!r}")
    text = zbar(drawn)
    scan = spawn([NEARCARD, "qr", "scan", text], home, other)
    if scan.expect([r"[Pp]assphrase[^:]*: ", pexpect.EOF, pexpect.TIMEOUT]) == 0:
        scan.sendline("a later passphrase")
        scan.expect([pexpect.EOF, pexpect.TIMEOUT])
    out = scan.before or ""
    scan.close()
    code = scan.exitstatus
    if code != 0 or "Nova Newcomer" not in out:
        trip(10, f"the other person's qr scan of the terminal's code exited {code}: {out[-300:]!r}")
    passed(10)
    # 11. One address book under two names: the second is refused, naming the first.
    lab = os.path.join(os.path.dirname(os.path.abspath(__file__)), "carddav_lab.py")
    store = tempfile.mkdtemp(prefix="nearcard-walk-dav-")
    server = subprocess.Popen([sys.executable, lab, "serve", "--server", "radicale", "--dir", store], stdout=subprocess.PIPE, text=True)
    try:
        line = server.stdout.readline()
        info = json.loads(line) if line.startswith("{") else None
        if not info:
            trip(11, f"the Radicale lab did not start: {line!r}")
        password = os.path.join(home, "dav-password")
        shutil.copy(info["password_file"], password)
        os.chown(password, pwd.getpwnam(USER).pw_uid, pwd.getpwnam(USER).pw_gid)
        os.chmod(password, 0o600)
        add = [NEARCARD, "addressbook", "add", "--user", "alice", "--password-file", password]
        code, out = run(add[:3] + [info["url"]] + add[3:], home)
        if code != 0:
            trip(11, f"addressbook add {info['url']} exited {code}: {out[-300:]!r}")
        again = info["url"].replace("//localhost:", "//127.0.0.1:")
        code, out = run(add[:3] + [again] + add[3:], home)
        if code == 0 or "already added as " + info["addressbook"] not in out:
            trip(11, f"the same address book under {again} was not refused naming the first (exit {code}): {out[-300:]!r}")
    finally:
        server.terminate()
        server.wait(timeout=20)
        shutil.rmtree(store, ignore_errors=True)
    passed(11)
    # 12. In their own language: the package's catalogs are installed where gettext's are, and a person
    # whose environment asks for German reads the help in German.
    for lang in ("de", "fr", "ar"):
        if not os.path.exists(f"/usr/share/locale/{lang}/LC_MESSAGES/nearcard.mo"):
            trip(12, f"the package did not install /usr/share/locale/{lang}/LC_MESSAGES/nearcard.mo")
    code, out = run([NEARCARD, "--help"], home, env={"LANGUAGE": "de"})
    if code != 0 or "UNTERBEFEHLE:" not in out or "Karten mit einem Gegenüber im lokalen Netz tauschen." not in out:
        trip(12, f"LANGUAGE=de nearcard --help is not German (exit {code}): {out[:300]!r}")
    passed(12)


def terminal(args, home, rows, columns):
    """What a command draws in a rows×columns terminal (the passphrase typed when asked)."""
    c = pexpect.spawn("runuser", ["-u", USER, "--", "env", f"HOME={home}", "LANG=C.UTF-8", *args],
                      dimensions=(rows, columns), timeout=30, encoding="utf-8", codec_errors="replace")
    children.append(c)
    out = ""
    while True:
        i = c.expect([r"[Pp]assphrase[^:]*: ", pexpect.EOF, pexpect.TIMEOUT])
        out += c.before or ""
        if i != 0:
            break
        c.sendline(PASSPHRASE)
    c.close()
    return out


SEXTANT_EDGES = {0x20: 0, 0x258C: 0b010101, 0x2590: 0b101010, 0x2588: 0b111111}
HALF = {0x20: 0, 0x2580: 0b01, 0x2584: 0b10, 0x2588: 0b11}


def zbar(drawn):
    """Draws a terminal's code rows (dark on light, between ESC[30;47m and ESC[0m; words beside them
    left out) as a terminal cell shows them, twice as tall as wide, and reads the image with zbarimg."""
    from PIL import Image
    rows = re.findall(r"\x1b\[30;47m(.*?)\x1b\[0m", drawn)
    if not rows:
        return ""
    sextants = any(0x1FB00 <= ord(ch) <= 0x1FB3B for r in rows for ch in r)
    across, down = (2, 3) if sextants else (1, 2)
    cell_w, cell_h = 12, 24
    width = max(len(r) for r in rows)
    img = Image.new("L", (width * cell_w, len(rows) * cell_h), 255)
    px = img.load()
    for y, row in enumerate(rows):
        for x, ch in enumerate(row):
            o = ord(ch)
            if sextants:
                if 0x1FB00 <= o <= 0x1FB3B:
                    bits = o - 0x1FB00 + 1
                    bits += 1 if bits >= 0b010101 else 0
                    bits += 1 if bits >= 0b101010 else 0
                else:
                    bits = SEXTANT_EDGES.get(o, 0)
            else:
                bits = HALF.get(o, 0)
            for i in range(across * down):
                if bits & (1 << i):
                    mx, my = i % across, i // across
                    w, h = cell_w // across, cell_h // down
                    for yy in range(y * cell_h + my * h, y * cell_h + (my + 1) * h):
                        for xx in range(x * cell_w + mx * w, x * cell_w + (mx + 1) * w):
                            px[xx, yy] = 0
    path = tempfile.mktemp(suffix=".png", prefix="nearcard-walk-code-")
    img.save(path)
    try:
        out = subprocess.run(["zbarimg", "--quiet", "--raw", "-Sbinary", path], capture_output=True, text=True)
        return out.stdout.strip()
    finally:
        os.unlink(path)


if __name__ == "__main__":
    main()
