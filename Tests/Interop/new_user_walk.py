#!/usr/bin/env python3
"""A new person's first hour with Nearcard, from the Debian package, as an ordinary account.

  new_user_walk.py [DEB]        (`make walk`; DEB defaults to the newest build/nearcard_*.deb)

As root it installs the package (dpkg -i), then walks as the account nearcard-test (made if missing)
with a fresh $HOME, at an 80×24 terminal (pexpect), the way issue 35 describes the first hour:
  1. `nearcard init --name …` asks for a passphrase, twice, and seals the keys;
  2. `nearcard card set …`;
  3. `nearcard listen` asks for the passphrase once, and listens;
  4. `nearcard qr make` in 80×24 draws a code (it asks for the passphrase: a zk code is signed);
  5. a second `nearcard ui` on the same home says a node runs there already (one node per home);
  6. another person (a second home) exchanges cards with the running node: both have each other;
  7. the walker, its node stopped, dials the other person's node: the passphrase once, exit 0;
  8. the bot example the package installs (/usr/share/doc/nearcard/examples/run-bot.sh) starts and
     an exchange with it completes.
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
    listen = spawn([NEARCARD, "listen", "--no-discovery", "--port", "0", "--accept", "all"], home)
    if listen.expect([r"[Pp]assphrase", pexpect.EOF, pexpect.TIMEOUT]) != 0:
        trip(3, f"listen did not ask for the passphrase: {listen.before!r}")
    listen.sendline(PASSPHRASE)
    if listen.expect([r"Listening on port (\d+)", r"[Pp]assphrase", pexpect.EOF, pexpect.TIMEOUT]) != 0:
        trip(3, f"one passphrase did not start listen: {listen.before[-300:]!r}")
    port = int(listen.match.group(1))
    passed(3, port=port)
    # 4. qr make in 80×24: a code that fits, said to be drawn with sextants.
    qr = spawn([NEARCARD, "qr", "make"], home, timeout=20)
    while True:
        i = qr.expect([r"[Pp]assphrase", r"sextant characters", r"too small", pexpect.EOF, pexpect.TIMEOUT])
        if i == 0:
            qr.sendline(PASSPHRASE)
            continue
        break
    if i != 1:
        trip(4, f"qr make in 80×24 drew no code: {qr.before[-300:]!r}")
    qr.sendcontrol("c")
    qr.expect([pexpect.EOF, pexpect.TIMEOUT])
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
    code, out = run([NEARCARD, "exchange", f"127.0.0.1:{port}", "--yes"], home, other)
    if code != 0:
        trip(6, f"the other person's exchange exited {code}: {out[-300:]!r}")
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


if __name__ == "__main__":
    main()
