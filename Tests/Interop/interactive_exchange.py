#!/usr/bin/env python3
"""Drives two interactive nearcard processes through pseudo-terminals, as two people would.

  interactive_exchange.py WRAP NEARCARD HOME_A HOME_B MODE [HOME_C]

The listener (HOME_A, `listen --accept ask`) and the dialer (HOME_B, `exchange 127.0.0.1:PORT`) both
run under WRAP, one shell-style string (e.g. "ip netns exec NS env DBUS_SYSTEM_BUS_ADDRESS=…": inside
a lab's namespace). MODE:
  accept   both read the check code and answer y (with a message each)
  decline  the listener answers n after reading the code
  vanish   the dialer is killed (SIGKILL) while the listener's prompt is open; then a second dialer
           exchanges with the same listener, which must still serve
  interrupt  the dialer's person presses Ctrl-C while the listener's prompt is open (the dialer
           without --json: what it says is the point)
  german   as accept, both people in German (LANGUAGE=de), the dialer without --json: what each is
           asked and told is the point
  queue    two dialers (HOME_B and HOME_C, with --yes) ask at once; the listener's person sees one
           request, answers y; only then is the second shown, with its time left; answers n
Prints one JSON object with what each side showed and how the dialer exited.
"""
import json
import re
import shlex
import signal
import sys
import time

import pexpect

wrap, nearcard, home_a, home_b, mode = sys.argv[1:6]
home_c = sys.argv[6] if len(sys.argv) > 6 else None
WRAP = shlex.split(wrap)
CODE = re.compile(rb"Check code\s+(\d{3} \d{3})")
ENV = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "TERM": "dumb"}
if mode == "german":
    # The code stays in ASCII digits in every language.
    CODE = re.compile("Prüfcode\\s+(\\d{3} \\d{3})".encode())
    ENV["LANGUAGE"] = "de"


def spawn(*args):
    return pexpect.spawn(WRAP[0], [*WRAP[1:], nearcard, *args], timeout=30, env=ENV)


out = {}
listener = spawn("listen", "--home", home_a, "--port", "0", "--no-discovery")
listener.expect("(?:Listening on port|Empfangsbereit auf Port) (\\d+)".encode())
port = listener.match.group(1).decode()
out["listenerStarted"] = listener.match.group(0).decode()


def dial(home=home_b, *extra):
    return spawn("exchange", f"127.0.0.1:{port}", "--home", home, "--json", *extra)


if mode == "queue":
    REQUEST = re.compile(rb"Exchange request from ([^\r\n]+?) at ")
    first, second = dial(home_b, "--yes"), dial(home_c, "--yes")
    listener.expect(REQUEST)
    shown = [listener.match.group(1).decode()]
    listener.expect(rb"\((\d+) s to answer\) \[y/N\]")
    # Both requests are in: the second dialer's session is waiting for the listener's decision too.
    # Nothing of the second may be on screen while the first is being answered.
    time.sleep(1.5)
    try:
        listener.expect(REQUEST, timeout=0.5)
        out["secondShownBeforeFirstAnswered"] = True
    except pexpect.TIMEOUT:
        out["secondShownBeforeFirstAnswered"] = False
    listener.sendline("y")
    listener.expect(rb"Message for them")
    listener.sendline("")
    listener.expect(REQUEST)
    shown.append(listener.match.group(1).decode())
    listener.expect(rb"\((\d+) s to answer\) \[y/N\]")
    out["secondTimeLeft"] = int(listener.match.group(1))
    listener.sendline("n")
    for name, d in (("b", first), ("c", second)):
        d.expect(pexpect.EOF)
        d.close()
        out[f"exit_{name}"] = d.exitstatus
    out["shown"] = shown
    listener.kill(signal.SIGINT)
    listener.expect(pexpect.EOF)
    listener.close()
    out["listenerExit"] = listener.exitstatus
    print(json.dumps(out))
    sys.exit(0)

dialer = dial() if mode not in ("interrupt", "german") else spawn("exchange", f"127.0.0.1:{port}", "--home", home_b)
listener.expect(CODE)
out["listenerCode"] = listener.match.group(1).decode()
out["listenerShown"] = (listener.before + listener.after).decode(errors="replace")[-600:]
dialer.expect(CODE)
out["dialerCode"] = dialer.match.group(1).decode()

# Protocol v2: the listener decides first (it shows who it is when it accepts); then the dialer is asked.
if mode == "accept":
    listener.expect(rb"\[y/N\]")
    listener.sendline("y")
    listener.expect(rb"Message for them")
    listener.sendline("Hello from the listener")
    dialer.expect(rb"\[y/N\]")
    out["dialerAsked"] = dialer.before.decode(errors="replace")[-600:]
    dialer.sendline("y")
    dialer.expect(rb"Message for them")
    dialer.sendline("Hello from the dialer")
    listener.expect(rb"Exchanged cards with")
    dialer.expect(pexpect.EOF)
    dialer.close()
    out["dialerExit"] = dialer.exitstatus
    out["dialerOutput"] = dialer.before.decode(errors="replace")
elif mode == "german":
    listener.expect(rb"\[j/N\]")
    out["listenerAsked"] = listener.before.decode(errors="replace")[-300:]
    listener.sendline("j")
    listener.expect("Nachricht an sie".encode())
    listener.sendline("Hallo vom Zuhörer")
    dialer.expect(rb"\[j/N\]")
    out["dialerAsked"] = dialer.before.decode(errors="replace")[-600:]
    dialer.sendline("ja")
    dialer.expect("Nachricht an sie".encode())
    dialer.sendline("")
    listener.expect("Karten getauscht mit".encode())
    dialer.expect(pexpect.EOF)
    dialer.close()
    out["dialerExit"] = dialer.exitstatus
    out["dialerOutput"] = dialer.before.decode(errors="replace")
elif mode == "decline":
    # The listener says no before the dialer is ever asked (and before it learns who the listener is).
    listener.expect(rb"\[y/N\]")
    listener.sendline("n")
    listener.expect(rb"failed")
    dialer.expect(pexpect.EOF)
    dialer.close()
    out["dialerExit"] = dialer.exitstatus
    out["dialerOutput"] = dialer.before.decode(errors="replace")
elif mode == "vanish":
    listener.expect(rb"\[y/N\]")
    # The dialer's process group (ip netns exec → env → nearcard) dies at once.
    dialer.kill(signal.SIGKILL)
    dialer.close(force=True)
    listener.expect(rb"(ended by them|failed): ([^\r\n]*)")
    out["listenerFailure"] = listener.match.group(2).decode(errors="replace")
    # The listener keeps serving: a second exchange completes.
    second = dial()
    listener.expect(CODE)
    listener.expect(rb"\[y/N\]")
    listener.sendline("y")
    listener.expect(rb"Message for them")
    listener.sendline("")
    second.expect(rb"\[y/N\]")
    second.sendline("y")
    second.expect(rb"Message for them")
    second.sendline("")
    listener.expect(rb"Exchanged cards with")
    second.expect(pexpect.EOF)
    second.close()
    out["dialerExit"] = second.exitstatus
elif mode == "interrupt":
    listener.expect(rb"\[y/N\]")
    dialer.sendcontrol("c")
    dialer.expect(pexpect.EOF)
    dialer.close()
    out["dialerExit"] = dialer.exitstatus
    out["dialerSignal"] = dialer.signalstatus
    out["dialerOutput"] = dialer.before.decode(errors="replace")
    listener.expect(rb"(ended by them|failed): ([^\r\n]*)")
    out["listenerFailure"] = listener.match.group(2).decode(errors="replace")
else:
    sys.exit(f"unknown mode {mode}")

listener.kill(signal.SIGINT)
listener.expect(pexpect.EOF)
listener.close()
out["listenerExit"] = listener.exitstatus
print(json.dumps(out))
