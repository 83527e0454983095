#!/usr/bin/env python3
"""Drives two Nearcard nodes entirely through the JSON-lines interface (docs/JSONL.md), as a program
would: a bot (`nearcard bot --policy FILE`) and an operator-driven node (`nearcard listen --jsonl
--accept ask`). Written from docs/JSONL.md only.

usage: jsonl_driver.py --nearcard PATH --bot-home DIR --visitor-home DIR --policy FILE [--transcript FILE] [--wrap CMD…]

--transcript writes every line both nodes printed (stdout and stderr) to FILE, for the caller to check.

--wrap runs each node under a prefix (e.g. a lab namespace's `ip netns exec NS env DBUS_SYSTEM_BUS_ADDRESS=…`). Prints a JSON summary and exits
0 when every check passed, 1 otherwise (the failed check on stderr).
"""
import argparse
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from jsonl_node import JsonlNode  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--nearcard", required=True)
ap.add_argument("--bot-home", required=True)
ap.add_argument("--visitor-home", required=True)
ap.add_argument("--policy", required=True)
ap.add_argument("--transcript")
ap.add_argument("--wrap", nargs=argparse.REMAINDER, default=[])
args = ap.parse_args()


def fail(why):
    print(f"jsonl_driver: {why}", file=sys.stderr)
    for n in nodes:
        n.proc.kill()
    sys.exit(1)


def check(cond, why):
    if not cond:
        fail(why)


nodes = []
bot = JsonlNode("bot", [args.nearcard, "bot", "--policy", args.policy, "--home", args.bot_home, "--port", "0"], lambda why: fail(why), args.wrap)
nodes.append(bot)
visitor = JsonlNode("visitor", [args.nearcard, "listen", "--jsonl", "--accept", "ask", "--home", args.visitor_home, "--port", "0"], lambda why: fail(why), args.wrap)
nodes.append(visitor)

b = bot.wait(lambda e: e["event"] == "started", "started")
v = visitor.wait(lambda e: e["event"] == "started", "started")
check(b["did"].startswith("did:key:zDn") and isinstance(b["port"], int) and b["schema"] == 1, f"bot started line: {b}")

# Discovery: each sees the other, by the name it announces (discovery carries no fingerprint: §3).
found = visitor.wait(lambda e: e["event"] == "peer.found" and e["name"] == b["name"], "peer.found for the bot")
check("fingerprint" not in found and len(found["id"]) == 8 and found["contact"] is None and found["display"] == b["name"], f"peer.found: {found}")
v_seen = bot.wait(lambda e: e["event"] == "peer.found" and e["name"] == v["name"], "peer.found for the visitor")
visitor.send({"cmd": "peers", "ref": "p1"})
r = visitor.wait(lambda e: e["event"] == "reply" and e["ref"] == "p1", "peers reply")
check(r["ok"] and any(p["name"] == b["name"] for p in r["peers"]), f"peers reply: {r}")

# 1. The visitor asks the bot (by its peer id): the bot's policy accepts with its template.
visitor.send({"cmd": "exchange", "peer": found["id"], "message": "Hello bot", "ref": "x1"})
r = visitor.wait(lambda e: e["event"] == "reply" and e["ref"] == "x1", "exchange reply")
check(r["ok"], f"exchange with the bot failed: {r}")
contact = r["contact"]
check(contact["didPublicKey"] == b["did"] and contact["verificationStatus"] == "verified", f"visitor's contact: {contact}")
check(contact["theirEphemeralMessage"] == "Thanks for stopping by, Visitor!", f"templated message: {contact['theirEphemeralMessage']}")
check(len(r["sas"]) == 7, f"sas: {r['sas']}")
done = bot.wait(lambda e: e["event"] == "exchange.completed", "exchange.completed at the bot")
check(done["contact"]["didPublicKey"] == v["did"] and done["theirMessage"] == "Hello bot" and done["elapsedMs"] > 0, f"bot completed: {done}")

# 2. The policy's knownContact "decline": a second exchange is refused; the reason stays with the bot
#    (its own exchange.failed), the visitor reads only that it was declined (PROTOCOL.md §8).
visitor.send({"cmd": "exchange", "peer": b["name"], "ref": "x2"})
r = visitor.wait(lambda e: e["event"] == "reply" and e["ref"] == "x2", "second exchange reply")
check(not r["ok"] and r["error"]["code"] == "declined" and "already" not in r["error"]["message"], f"second exchange: {r}")
refused = bot.wait(lambda e: e["event"] == "exchange.failed" and e["code"] == "declined", "the bot's own record of the refusal")
check("already" in refused["reason"], f"the bot says why: {refused}")

# 3. The bot dials the visitor, whose operator decides by command: decline, then accept.
bot.send(f"exchange {v_seen['id']}")
req = visitor.wait(lambda e: e["event"] == "exchange.requested" and e["role"] == "responder", "exchange.requested")
check(req["decision"] == "pending" and req["peer"]["did"] == b["did"] and len(req["sas"]) == 7, f"request: {req}")
visitor.send({"cmd": "decline", "id": req["id"], "reason": "not now", "ref": "d1"})
r = visitor.wait(lambda e: e["event"] == "reply" and e["ref"] == "d1", "decline reply")
check(r["ok"], f"decline: {r}")
failed = bot.wait(lambda e: e["event"] == "reply" and e["cmd"] == "exchange", "bot's exchange reply")
check(not failed["ok"] and failed["error"]["code"] == "declined", f"bot after decline: {failed}")
visitor.send({"cmd": "decline", "id": req["id"], "ref": "d2"})
r = visitor.wait(lambda e: e["event"] == "reply" and e["ref"] == "d2", "second decline reply")
check(not r["ok"] and r["error"]["code"] == "not_found", f"deciding twice: {r}")

bot.send({"cmd": "exchange", "peer": v["name"], "ref": "x3"})
req = visitor.wait(lambda e: e["event"] == "exchange.requested" and e["role"] == "responder", "second exchange.requested")
visitor.send({"cmd": "accept", "id": req["id"], "message": "Nice booth"})
r = bot.wait(lambda e: e["event"] == "reply" and e["ref"] == "x3", "bot's second exchange reply")
check(r["ok"] and r["contact"]["theirEphemeralMessage"] == "Nice booth", f"accepted exchange: {r}")

# 4. A follow-up message from the visitor to the bot, by the bot's DID.
visitor.send({"cmd": "message", "contact": b["did"], "text": "See you tomorrow", "ref": "m1"})
r = visitor.wait(lambda e: e["event"] == "reply" and e["ref"] == "m1", "message reply")
check(r["ok"] and r["message"]["state"] == "delivered", f"message: {r}")
got = bot.wait(lambda e: e["event"] == "message.received", "message.received")
check(got["text"] == "See you tomorrow" and got["from"] == v["did"] and got["keysMatched"], f"received: {got}")

# 5. Bad input gets an error line and the node keeps serving; accept is not the bot's to take.
visitor.send("{not json")
visitor.wait(lambda e: e["event"] == "error", "error for a bad line")
bot.send({"cmd": "accept", "id": "abc", "ref": "a9"})
r = bot.wait(lambda e: e["event"] == "reply" and e["ref"] == "a9", "bot accept reply")
check(not r["ok"] and "policy" in r["error"]["message"], f"accept on a bot: {r}")

# 6. The visitor forgets the bot (contacts delete, from the command line while it runs): the bot's next
#    message is refused by the visitor's node, and the reply says so with an error code.
gone = subprocess.run(list(args.wrap) + [args.nearcard, "contacts", "delete", b["did"], "--yes", "--home", args.visitor_home],
                      capture_output=True, text=True)
check(gone.returncode == 0, f"contacts delete: {gone.stderr}")
bot.send({"cmd": "message", "contact": v["did"], "text": "Still there?", "ref": "m2"})
r = bot.wait(lambda e: e["event"] == "reply" and e["ref"] == "m2", "refused message reply")
check(not r["ok"] and r["error"]["code"] == "refused" and r["message"]["state"] == "failed", f"refused message: {r}")

# 7. A command still at work when its node quits gets its reply (`stopped`) before `stopped`.
bot.send({"cmd": "exchange", "peer": v["name"], "ref": "x4"})
req = visitor.wait(lambda e: e["event"] == "exchange.requested" and e["role"] == "responder", "third exchange.requested")
bot.send({"cmd": "quit", "ref": "q1"})
r = bot.wait(lambda e: e["event"] == "reply" and e["ref"] == "x4", "in-flight exchange reply at quit")
check(not r["ok"] and r["error"]["code"] == "stopped", f"in-flight exchange at quit: {r}")
bot.wait(lambda e: e["event"] == "stopped", "bot stopped")
check(bot.proc.wait(timeout=10) == 0, f"bot exit code {bot.proc.returncode}")
lost = visitor.wait(lambda e: e["event"] == "exchange.failed" and e["id"] == req["id"], "the visitor's request ends with its peer")
check(lost["code"] == "connection_lost", f"visitor after the bot quit: {lost}")

# 8. A node that stops with a request still waiting ends that session (exchange.failed) before `stopped`;
#    its peer (a one-shot `nearcard exchange`, here with the bot's home) hears why and exits non-zero.
dialler = subprocess.Popen(list(args.wrap) + [args.nearcard, "exchange", f"127.0.0.1:{v['port']}", "--yes", "--home", args.bot_home],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
req = visitor.wait(lambda e: e["event"] == "exchange.requested" and e["role"] == "responder", "a request waiting at quit")
visitor.send({"cmd": "quit"})
ended = visitor.wait(lambda e: e["event"] == "exchange.failed" and e["id"] == req["id"], "the waiting request ended at quit")
check(ended["code"] == "connection_lost" and "stopped" in ended["reason"], f"request at quit: {ended}")
visitor.wait(lambda e: e["event"] == "stopped", "visitor stopped")
check(visitor.proc.wait(timeout=10) == 0, f"visitor exit code {visitor.proc.returncode}")
out, err = dialler.communicate(timeout=30)
check(dialler.returncode == 9 and "stopped" in err, f"the dialler of a stopping node: exit {dialler.returncode}: {err}")
if args.transcript:
    with open(args.transcript, "w") as f:
        for n in nodes:
            f.writelines(n.lines)
            f.write(n.proc.stderr.read())
print(json.dumps({"ok": True, "botEvents": sorted({e["event"] for e in bot.all}),
                  "visitorEvents": sorted({e["event"] for e in visitor.all})}))
