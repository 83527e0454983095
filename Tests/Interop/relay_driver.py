#!/usr/bin/env python3
"""A man in the middle on the LAN, driven through the JSON-lines interface (docs/JSONL.md).

usage: relay_driver.py --nearcard PATH --alice HOME --bob HOME --mallory HOME
                       [--wrap-alice CMD] [--wrap-bob CMD] [--wrap-mallory CMD] [--wrap CMD…]

Each node runs under its --wrap-NAME prefix (one shell-style string, e.g. "ip netns exec nsA env
DBUS_SYSTEM_BUS_ADDRESS=…": three laptops in three namespaces), or under --wrap for all of them.

Mallory's node is named like Bob ("Bob Honest") and sits between Alice and Bob: when Alice asks
Mallory for an exchange (with "confirm": she decides after seeing the code, as a person at the CLI
does), Mallory holds Alice's request and asks the real Bob. Alice and Bob read their codes to each
other; they differ, so both decline. Prints a JSON report: the codes each saw and what each decided.
"""
import argparse
import shlex
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from jsonl_node import JsonlNode  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--nearcard", required=True)
ap.add_argument("--alice", required=True)
ap.add_argument("--bob", required=True)
ap.add_argument("--mallory", required=True)
for who in ("alice", "bob", "mallory"):
    ap.add_argument(f"--wrap-{who}", default="")
ap.add_argument("--wrap", nargs=argparse.REMAINDER, default=[])
args = ap.parse_args()


def fail(why):
    print(f"relay_driver: {why}", file=sys.stderr)
    for n in nodes:
        n.proc.kill()
    sys.exit(1)


def node(name, home):
    return JsonlNode(name, [args.nearcard, "listen", "--jsonl", "--accept", "ask", "--home", home, "--port", "0"],
                     lambda why: fail(why), shlex.split(getattr(args, f"wrap_{name}")) or args.wrap)


# Bob and Alice are on the LAN first; Mallory arrives later and takes Bob's name. (Started together, the
# two "Bob Honest" services would probe at the same moment; which one keeps the name is then a race.)
nodes = [node("alice", args.alice), node("bob", args.bob)]
started, published = {}, {}


def settle(n):
    started[n.name] = n.wait(lambda e: e["event"] == "started", "started")
    published[n.name] = n.wait(lambda e: e["event"] == "published", "published")["instance"]


for n in list(nodes):
    settle(n)
nodes.append(node("mallory", args.mallory))
settle(nodes[-1])
alice, bob, mallory = nodes

# Alice finds "Bob Honest" on the LAN: two services carry that name; she picks Mallory's (she was fooled).
# Discovery carries no fingerprint (§3): the driver tells the two apart by the instance each published
# (Mallory, who came second, was renamed "Bob Honest #2"). Not by addresses: a running node's peer.found
# has none for a stranger until it dials it (docs/JSONL.md).
def at(who):
    return lambda e: e["event"] == "peer.found" and e["instance"] == published[who]


m_seen = alice.wait(at("mallory"), "Mallory's service")
b_seen = mallory.wait(at("bob"), "Bob's service")
alice.send({"cmd": "exchange", "peer": m_seen["id"], "confirm": True, "ref": "a1"})
# Protocol v2: Alice's screen shows the check code at once; who answers shows itself only when it accepts.
a_code = alice.wait(lambda e: e["event"] == "exchange.check-code", "Alice's check code")
m_from_alice = mallory.wait(lambda e: e["event"] == "exchange.requested" and e["role"] == "responder", "Alice's request at Mallory")

# Mallory relays: she asks the real Bob while Alice waits.
mallory.send({"cmd": "exchange", "peer": b_seen["id"], "ref": "m1"})
b_req = bob.wait(lambda e: e["event"] == "exchange.requested", "the relayed request at Bob")

# Alice and Bob compare the codes on their two screens: they differ, so Bob declines.
same = b_req["sas"] == a_code["sas"]
decisions = {"bob": "accept" if same else "decline"}
bob.send({"cmd": decisions["bob"], "id": b_req["id"], "ref": "d-bob"})
m_to_bob = mallory.wait(lambda e: e["event"] == "reply" and e.get("ref") == "m1", "Mallory's exchange with Bob")
# Mallory accepts Alice's request anyway, and so has to show herself: Alice sees Mallory's DID (not
# Bob's) beside a code that did not match, and declines.
mallory.send({"cmd": "accept", "id": m_from_alice["id"], "ref": "m2"})
a_req = alice.wait(lambda e: e["event"] == "exchange.requested", "Alice's request")
if a_req["decision"] != "pending" or a_req["role"] != "initiator":
    fail(f"Alice's own request should wait for her decision: {a_req}")
decisions["alice"] = "accept" if same and a_req["peer"]["did"] == started["bob"]["did"] else "decline"
alice.send({"cmd": decisions["alice"], "id": a_req["id"], "ref": "d-alice"})
a_done = alice.wait(lambda e: e["event"] == "reply" and e.get("ref") == "a1", "Alice's exchange reply")
mallory.wait(lambda e: e["event"] == "reply" and e.get("ref") == "m2", "Mallory's accept reply")

for n in nodes:
    n.send({"cmd": "quit"})
for n in nodes:
    n.proc.wait(timeout=10)
print(json.dumps({
    "dids": {k: v["did"] for k, v in started.items()},
    "names": published,
    "sas": {"alice": a_code["sas"], "malloryWithAlice": m_from_alice["sas"], "bob": b_req["sas"]},
    "alicePeerDID": a_req["peer"]["did"], "bobPeerDID": b_req["peer"]["did"],
    "decisions": decisions, "malloryToBob": m_to_bob, "alice": a_done,
}))
