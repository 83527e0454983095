#!/usr/bin/env python3
"""A stranger dialling a Nearcard node (protocol version 2), written from docs/PROTOCOL.md alone: what
does it learn about the responder if it stops after each message of the exchange? (§5: a per-session
Noise static key; §6.2: a responder shows its identity only in its accepting decision.)

  stranger_peer.py HOST PORT [--stop-after N] [--drain SECONDS] [--decline-expected] [--ask-sealed]
  stranger_peer.py HOST PORT --mail-probe [ik|xx-tag]

The exchange, numbered by the frames the stranger sends or reads (it is the initiator):
   1 send Noise message 1 (`nearcard/2`)      2 read Noise message 2 (the node's per-session static key)
   3 send Noise message 3                      4 send hello (with our identity: we are a stranger)
   5 read nonce                                6 send sas-reveal
   7 read the node's decision                  8 send our decision (accept)
   9 send our card                            10 read the node's card
  11 read the node's done                     12 send our done
  13 read confirm
--stop-after N stops after step N (default 13: the whole exchange); it then reads, without sending
anything, whatever the node still sends within --drain seconds (default 1; those frames count too: it
is what the stranger holds), and closes. --ask-sealed sends the hello WITHOUT identity (posing as a
contact, §6.2): the node must answer with a sealedIdentity the stranger cannot open, and the stranger
shows its identity in sas-reveal. --decline-expected: exit 0 only if the node declined and the
stranger holds nothing about it but its per-session Noise key.
--mail-probe sends only a mail session's Noise message 1: `ik` (default) an IK message 1 to a random
responder key (§15), `xx-tag` an XX message 1 with the clear payload `nearcard-mail/2`; the node must
close without answering. Exit 0 when nothing came back.

Prints ONE JSON line: {stoppedAfter, steps: [what each step saw], holds: {sessionStatic, did, name,
pubKey, signPubKey, presenceKey, fingerprint, cardFields, sealedIdentity (opaque, base64url)},
acceptedSeen, declined, aborted, sessionStaticIsLongTerm, ...}.
"""
import argparse
import json
import os
import socket
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the worktree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from python_peer import (TAG, MAIL_TAG, PROLOGUE, Me, PeerFault, Wire, b64, b64d, b64u, build_card,  # noqa: E402
                         check_identity, sha256, strict_json, xx_initiator)
from nacl.public import PrivateKey as X25519Private  # noqa: E402
from noise.connection import Keypair, NoiseConnection  # noqa: E402

LAST = 13


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("host")
    ap.add_argument("port", type=int)
    ap.add_argument("--stop-after", type=int, default=LAST, choices=range(1, LAST + 1), metavar="N")
    ap.add_argument("--drain", type=float, default=1.0)
    ap.add_argument("--decline-expected", action="store_true")
    ap.add_argument("--ask-sealed", action="store_true")
    ap.add_argument("--name", default="A Stranger")
    ap.add_argument("--mail-probe", nargs="?", const="ik", choices=["ik", "xx-tag"])
    args = ap.parse_args()
    if args.mail_probe:
        return mail_probe(args)
    return stranger(args)


def stranger(args):
    me = Me(args.name)
    holds = {}
    report = {"stoppedAfter": None, "steps": [], "holds": holds, "acceptedSeen": False, "myDid": me.did}
    state = {"h": None, "noise": None, "peer": None, "nonce_i": os.urandom(32), "step": 0}
    wire = Wire(args.host, args.port)
    session_static = X25519Private.generate()
    noise = xx_initiator(session_static)

    def learn_identity(ident, where):
        if not isinstance(ident, dict):
            return
        for k in ("did", "name", "pubKey", "signPubKey"):
            if k in ident:
                holds[k] = ident[k]
        holds["identityFrom"] = where
        try:
            _, fp = check_identity(ident, "responder", state["h"], me.did)
            holds["fingerprint"] = fp
            holds["identityVerified"] = True
        except PeerFault as e:
            holds["identityVerified"] = False
            holds["identityFault"] = e.reason

    def absorb(msg):
        """Whatever a node's message tells the stranger."""
        t = msg.get("type")
        if t == "nonce" and "sealedIdentity" in msg:
            holds["sealedIdentity"] = msg["sealedIdentity"]  # opaque: only holders of its presence key open it
        if t == "decision":
            if msg.get("accept") is True:
                report["acceptedSeen"] = True
            elif msg.get("accept") is False:
                report["declined"] = msg
            if "identity" in msg:
                learn_identity(msg["identity"], "decision")
        if t == "card":
            p = msg.get("payload", {})
            holds["cardFields"] = p.get("cardFields")
            for k, v in (("did", p.get("senderDID")), ("pubKey", p.get("pubKey")), ("signPubKey", p.get("signPubKey"))):
                if v and k not in holds:
                    holds[k] = v
            if "presenceKey" in msg:
                holds["presenceKey"] = msg["presenceKey"]
        if t == "abort":
            report["aborted"] = msg

    def read_transport():
        msg = strict_json(noise.decrypt(wire.recv()))
        absorb(msg)
        return msg

    def step(n, what, fn):
        """Runs step n unless we stopped before it; records what it saw."""
        if n > args.stop_after or report.get("ended"):
            return None
        try:
            seen = fn()
        except (ConnectionError, OSError) as e:
            report["ended"] = "closed by the node at step %d (%s)" % (n, e)
            return None
        if seen == "skip":
            return None
        state["step"] = n
        entry = {"step": n, "what": what}
        if isinstance(seen, dict):
            entry["type"] = seen.get("type")
            if seen.get("type") == "abort":
                report["ended"] = "abort at step %d" % n
        report["steps"].append(entry)
        return seen

    def send_json(msg):
        wire.send(noise.encrypt(json.dumps(msg, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()))
        return None

    def s1():
        wire.send(noise.write_message(TAG))

    def s2():
        noise.read_message(wire.recv())
        holds["sessionStatic"] = b64(bytes(noise.noise_protocol.handshake_state.rs.public_bytes))

    def s3():
        wire.send(noise.write_message(b""))
        state["h"] = noise.get_handshake_hash()

    def s4():
        h = state["h"]
        hello = {"type": "hello", "version": 2, "sasCommit": b64u(sha256(b"nearcard/sas-commit/v1\0" + h + state["nonce_i"]))}
        if not args.ask_sealed:
            hello["identity"] = me.identity("initiator", h)
        send_json(hello)

    def s6():
        reveal = {"type": "sas-reveal", "nonce": b64u(state["nonce_i"])}
        if args.ask_sealed:
            reveal["identity"] = me.identity("initiator", state["h"])
        send_json(reveal)

    def s9():
        if "pubKey" not in holds or "did" not in holds:
            report["cardNotSent"] = "no identity of the node to address a card to"
            args.stop_after = 8  # stop here, and drain what the node sends on our acceptance
            return "skip"
        send_json(build_card(me, holds["did"], b64d(holds["pubKey"]), state["h"], me.name, None))

    step(1, "sent Noise message 1", s1)
    step(2, "read Noise message 2", s2)
    step(3, "sent Noise message 3", s3)
    step(4, "sent hello", s4)
    step(5, "read nonce", read_transport)
    step(6, "sent sas-reveal", s6)
    decision = step(7, "read decision", read_transport)
    if decision is not None and decision.get("type") == "decision" and decision.get("accept") is False:
        report["ended"] = "declined"
    step(8, "sent decision", lambda: send_json({"type": "decision", "accept": True}))
    step(9, "sent card", s9)
    step(10, "read card", read_transport)
    step(11, "read done", read_transport)
    step(12, "sent done", lambda: send_json({"type": "done"}))
    step(13, "read confirm", read_transport)
    report["stoppedAfter"] = state["step"]

    # Stop: read, without sending anything, what the node still sends.
    drained = []
    if args.drain > 0 and not report.get("ended"):
        wire.sock.settimeout(args.drain)
        deadline = time.time() + args.drain
        try:
            while time.time() < deadline:
                raw = wire.recv()
                if state["h"] is None:
                    if state["step"] == 1:  # Noise message 2, read after the stop
                        noise.read_message(raw)
                        holds["sessionStatic"] = b64(bytes(noise.noise_protocol.handshake_state.rs.public_bytes))
                        drained.append("noise message 2")
                        continue
                    drained.append("frame before transport keys")
                    continue
                msg = strict_json(noise.decrypt(raw))
                absorb(msg)
                drained.append(msg.get("type"))
        except (ConnectionError, OSError, socket.timeout):
            pass
        except Exception as e:  # noqa: BLE001
            drained.append("unreadable: %s" % e)
    report["drained"] = drained
    wire.close()
    if "pubKey" in holds and "sessionStatic" in holds:
        report["sessionStaticIsLongTerm"] = holds["pubKey"] == holds["sessionStatic"]
    identifying = [k for k in ("did", "name", "pubKey", "signPubKey", "presenceKey", "fingerprint", "cardFields") if k in holds]
    report["identifying"] = identifying
    print(json.dumps(report))
    if args.decline_expected:
        return 0 if report.get("declined") and not identifying else 1
    return 0


def mail_probe(args):
    """Only a mail session's message 1, to a key the prober made up (ik) or with the tag in the clear
    (xx-tag). Reports whether anything came back before the node closed (§15: nothing may)."""
    wire = Wire(args.host, args.port, timeout=5)
    if args.mail_probe == "ik":
        noise = NoiseConnection.from_name(b"Noise_IK_25519_ChaChaPoly_SHA256")
        noise.set_as_initiator()
        noise.set_keypair_from_private_bytes(Keypair.STATIC, bytes(X25519Private.generate()))
        noise.set_keypair_from_public_bytes(Keypair.REMOTE_STATIC, bytes(X25519Private.generate().public_key))
    else:
        noise = NoiseConnection.from_name(b"Noise_XX_25519_ChaChaPoly_SHA256")
        noise.set_as_initiator()
        noise.set_keypair_from_private_bytes(Keypair.STATIC, bytes(X25519Private.generate()))
    noise.set_prologue(PROLOGUE)
    noise.start_handshake()
    msg1 = noise.write_message(MAIL_TAG)
    wire.send(msg1)
    got = b""
    t0 = time.time()
    closed = False
    try:
        while True:
            chunk = wire.sock.recv(65536)
            if not chunk:
                closed = True
                break
            got += chunk
    except (socket.timeout, OSError):
        pass
    wire.close()
    learnt = None
    if args.mail_probe == "xx-tag" and len(got) >= 2 and len(got) >= 2 + int.from_bytes(got[:2], "big"):
        try:  # the node answered an XX message 2: it carries the node's static key
            noise.read_message(got[2:2 + int.from_bytes(got[:2], "big")])
            learnt = b64(bytes(noise.noise_protocol.handshake_state.rs.public_bytes))
        except Exception:  # noqa: BLE001
            learnt = "unreadable"
    report = {"probe": args.mail_probe, "learntStatic": learnt, "message1Length": len(msg1), "bytesBack": len(got), "closedByNode": closed,
              "afterSeconds": round(time.time() - t0, 2), "nothingCameBack": not got}
    print(json.dumps(report))
    return 0 if not got else 1


if __name__ == "__main__":
    sys.exit(main())
