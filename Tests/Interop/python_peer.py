#!/usr/bin/env python3
"""An independent Nearcard peer, written from docs/PROTOCOL.md alone.

  python_peer.py HOST PORT [--name NAME] [--message TEXT] [--tamper WHAT]
  python_peer.py --invite TEXT [--name NAME] [--message TEXT]   (§19: dial the invitation's first address)

Dials a Nearcard node as the initiator, runs the whole exchange (Noise XX with `noiseprotocol`,
ECDSA P-256 with `cryptography`, Ed25519 and sealed boxes with PyNaCl), verifies the node's card the
way §9 says, and prints a JSON report. --tamper sends a deliberately wrong card (for negative tests):
  binding   sessionBinding of another session      receiver  receiver is someone else
  field     a card field the SD-JWT does not open    route     a route sealed to someone else
--violate breaks one rule of the spec on purpose and reports how the node answered
(`aborted` with its code and reason, or `closedWithoutAbort`):
  grapheme-name     a card name of one grapheme and 301 code points (§1: limits count code points)
  long-message      an ephemeral message of 141 characters (§6)
  control-message   an ephemeral message with a carriage return (§1 control characters)
  pretty-hello      the hello pretty-printed, not in its JCS form (§1)
  message3-payload  Noise message 3 with a payload (§5: it must be empty; no abort before keys)
  null-disclosure   the SD-JWT attaches a disclosure of null for a field the card lacks (§9)
--mail-impostor PORT listens on PORT as someone else answering at a contact's address (§15) and
reports what the sender sent it: a sender MUST stop after message 2, revealing nothing.
Exit 0 when the exchange completed, 1 when it ended otherwise (the report says how).
"""
import argparse
import base64
import hashlib
import json
import os
import socket
import struct
import sys
import time

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature, encode_dss_signature
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from nacl.public import PrivateKey as X25519Private, PublicKey as X25519Public, SealedBox
from nacl.signing import SigningKey, VerifyKey
from noise.connection import Keypair, NoiseConnection

B58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
FIELDS = ["name", "email", "phone", "company", "title", "socialNetworks", "skills"]


def jcs(v) -> bytes:
    # Our messages hold only strings, integers, booleans, arrays and objects with ASCII keys:
    # for those, sorted keys and compact separators are exactly RFC 8785.
    return json.dumps(v, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def b64(b): return base64.b64encode(b).decode()
def b64d(s): return base64.b64decode(s, validate=True)
def b64u(b): return base64.urlsafe_b64encode(b).rstrip(b"=").decode()
def b64ud(s): return base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))
def sha256(b): return hashlib.sha256(b).digest()


def b58encode(data: bytes) -> str:
    n = int.from_bytes(data, "big")
    out = ""
    while n:
        n, r = divmod(n, 58)
        out = B58[r] + out
    return "1" * (len(data) - len(data.lstrip(b"\0"))) + out


def b58decode(s: str) -> bytes:
    n = 0
    for c in s:
        n = n * 58 + B58.index(c)
    body = n.to_bytes((n.bit_length() + 7) // 8, "big")
    return b"\0" * (len(s) - len(s.lstrip("1"))) + body


class P256:
    def __init__(self):
        self.key = ec.generate_private_key(ec.SECP256R1())
        self.compressed = self.key.public_key().public_bytes(Encoding.X962, PublicFormat.CompressedPoint)
        self.did = "did:key:z" + b58encode(bytes([0x80, 0x24]) + self.compressed)

    def sign(self, data: bytes) -> bytes:
        r, s = decode_dss_signature(self.key.sign(data, ec.ECDSA(hashes.SHA256())))
        return r.to_bytes(32, "big") + s.to_bytes(32, "big")


def did_public_key(did: str):
    assert did.startswith("did:key:z"), "not a did:key"
    raw = b58decode(did[len("did:key:z"):])
    assert raw[:2] == bytes([0x80, 0x24]) and len(raw) == 35, "not a P-256 did:key"
    return ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), raw[2:]), raw[2:]


def verify_p256(did: str, sig: bytes, data: bytes) -> bool:
    key, _ = did_public_key(did)
    try:
        key.verify(encode_dss_signature(int.from_bytes(sig[:32], "big"), int.from_bytes(sig[32:], "big")), data, ec.ECDSA(hashes.SHA256()))
        return True
    except Exception:  # noqa: BLE001
        return False


def fingerprint(compressed: bytes, x25519: bytes, ed25519: bytes) -> str:
    return sha256(b"nearcard-fingerprint-v1\0" + compressed + x25519 + ed25519)[:8].hex()


class Wire:
    def __init__(self, host, port):
        self.sock = socket.create_connection((host, port), timeout=15)
        self.buf = b""
        self.sent = []  # every frame, as it went on the wire (for --record)

    def send(self, data: bytes):
        self.sent.append(data)
        self.sock.sendall(struct.pack(">H", len(data)) + data)

    def recv(self) -> bytes:
        while True:
            if len(self.buf) >= 2:
                n = struct.unpack(">H", self.buf[:2])[0]
                if len(self.buf) >= 2 + n:
                    frame, self.buf = self.buf[2:2 + n], self.buf[2 + n:]
                    return frame
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("connection closed")
            self.buf += chunk


def dial(host, port, x_static, version: bytes, message3=b""):
    """Connects and runs Noise XX as the initiator, message 1 carrying `version`. Returns the wire,
    the Noise connection, and the responder's static key (read before message 3 discards it)."""
    wire = Wire(host, port)
    noise = NoiseConnection.from_name(b"Noise_XX_25519_ChaChaPoly_SHA256")
    noise.set_as_initiator()
    noise.set_keypair_from_private_bytes(Keypair.STATIC, bytes(x_static))
    noise.set_prologue(b"nearcard-exchange")
    noise.start_handshake()
    wire.send(noise.write_message(version))
    noise.read_message(wire.recv())
    remote_static = noise.noise_protocol.handshake_state.rs.public_bytes
    wire.send(noise.write_message(message3))
    return wire, noise, remote_static


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("host", nargs="?")
    ap.add_argument("port", type=int, nargs="?")
    ap.add_argument("--invite", metavar="TEXT", help="a QR invitation (§19): dial its first address, prove its secret, expect its fingerprint")
    ap.add_argument("--name", default="Python Peer")
    ap.add_argument("--message")
    ap.add_argument("--tamper", choices=["binding", "receiver", "field", "route"])
    ap.add_argument("--record", metavar="FILE", help="write the frames this exchange sent to FILE (JSON, base64)")
    ap.add_argument("--replay", metavar="FILE",
                    help="send the frames recorded in FILE to the node, one per frame it sends back; print how far it got")
    ap.add_argument("--mail-stranger", action="store_true",
                    help="open a mail session (nearcard-mail/1) as a stranger with a made-up token; print how the node answers")
    ap.add_argument("--violate", choices=["grapheme-name", "long-message", "control-message", "pretty-hello", "message3-payload",
                                          "null-disclosure"])
    ap.add_argument("--mail-impostor", type=int, metavar="PORT")
    args = ap.parse_args()
    if args.mail_impostor:
        return mail_impostor(args)
    if args.mail_stranger:
        return mail_stranger(args)
    if args.replay:
        return replay(args)
    report = {}

    did_key = P256()
    x_static = X25519Private.generate()
    ed = SigningKey.generate()
    me_fp = fingerprint(did_key.compressed, bytes(x_static.public_key), bytes(ed.verify_key))

    invitation = None
    if args.invite:
        # §19: nearcard-invite: ‖ base64url(JCS({v, fp, name?, addrs, id, secret, exp}))
        invitation = json.loads(b64ud(args.invite.strip()[len("nearcard-invite:"):]))
        assert invitation["v"] == 1, invitation
        host, _, port = invitation["addrs"][0].rpartition(":")
        args.host, args.port = host.strip("[]"), int(port)
    violate = args.violate
    wire, noise, remote_static = dial(args.host, args.port, x_static, b"nearcard/1",
                                      message3=b"surprise" if violate == "message3-payload" else b"")
    h = noise.get_handshake_hash()

    def send(msg, pretty=False):
        wire.send(noise.encrypt(json.dumps(msg, indent=2).encode() if pretty else jcs(msg)))

    def recv():
        try:
            return json.loads(noise.decrypt(wire.recv()))
        except (ConnectionError, OSError) as e:
            if violate:
                report["closedWithoutAbort"] = True
                print(json.dumps(report)); sys.exit(1)
            raise e

    # hello (initiator): commit to the SAS nonce, prove the DID over h.
    n_i = os.urandom(32)
    hello = {"type": "hello", "version": 1, "did": did_key.did, "name": args.name, "signPubKey": b64(bytes(ed.verify_key)),
             "sasCommit": b64u(sha256(b"nearcard/sas-commit/v1\0" + h + n_i))}
    if invitation:
        import hmac
        proof = hmac.new(b64ud(invitation["secret"]), b"nearcard/invite/v1\0" + h, hashlib.sha256).digest()
        hello["invite"] = {"id": invitation["id"], "proof": b64u(proof)}
    signed = dict(hello, role="initiator", handshakeHash=b64u(h))
    hello["signature"] = b64(did_key.sign(b"nearcard/session-auth/v1\0" + jcs(signed)))
    send(hello, pretty=violate == "pretty-hello")

    peer = recv()
    if peer["type"] == "abort":
        report["aborted"] = peer
        print(json.dumps(report)); return 1
    assert peer["type"] == "hello" and "sasNonce" in peer, peer
    peer_sig = b64d(peer.pop("signature"))
    assert verify_p256(peer["did"], peer_sig, b"nearcard/session-auth/v1\0" + jcs(dict(peer, role="responder", handshakeHash=b64u(h)))), "responder's DID proof"
    _, peer_compressed = did_public_key(peer["did"])
    peer_sign = b64d(peer["signPubKey"])
    peer_fp = fingerprint(peer_compressed, remote_static, peer_sign)
    if invitation and peer_fp != invitation["fp"]:
        send({"type": "abort", "code": "identity_mismatch", "reason": "not the node the invitation names"})
        report["aborted"] = {"code": "identity_mismatch", "peerFingerprint": peer_fp}
        print(json.dumps(report)); return 1
    n_r = b64ud(peer["sasNonce"])
    send({"type": "sas-reveal", "nonce": b64u(n_i)})
    d = sha256(b"nearcard/sas/v1\0" + h + n_i + n_r)
    sas = int.from_bytes(d[:4], "big") % 1000000
    report.update(sas="%03d %03d" % (sas // 1000, sas % 1000), peerDid=peer["did"], peerFingerprint=peer_fp, myDid=did_key.did)

    send({"type": "decision", "accept": True})
    decision = recv()
    if decision["type"] != "decision" or not decision["accept"]:
        report["declined"] = decision
        print(json.dumps(report)); return 1

    # Our card: SD-JWT over all 7 fields, sealed route, signed payload.
    now = int(time.time())
    card = {"name": args.name, "company": "Python Software", "email": "peer@example.org"}
    if violate == "grapheme-name":
        card["name"] = "e" + "\u0301" * 300  # one grapheme, 301 code points
    message = {"long-message": "a" * 141, "control-message": "see you\r\nat 3"}.get(violate, args.message)
    disclosed = {"name", "company"}
    digests, disclosures = [], []
    for f in FIELDS:
        disc = b64u(jcs([b64u(os.urandom(16)), f, card.get(f)]))
        digests.append(b64u(sha256(disc.encode())))
        if f in disclosed or (violate == "null-disclosure" and f == "phone"):
            disclosures.append(disc)
    header = b64u(jcs({"alg": "ES256", "typ": "nearcard-card+sd-jwt"}))
    claims = b64u(jcs({"iss": did_key.did, "iat": now, "_sd_alg": "sha-256", "_sd": sorted(digests)}))
    jwt = header + "." + claims + "." + b64u(did_key.sign((header + "." + claims).encode()))
    sd_proof = "~".join([jwt] + disclosures) + "~"
    shown = {k: v for k, v in card.items() if k in disclosed}
    if args.tamper == "field":
        shown["email"] = card["email"]
    route = {"version": 1, "did": did_key.did, "pubKey": b64(bytes(x_static.public_key)), "signPubKey": b64(bytes(ed.verify_key)),
             "fingerprint": me_fp, "mailboxToken": b64u(os.urandom(32)), "recipient": peer["did"], "issuedAt": now,
             "expiresAt": now + 86400, "hints": []}
    route_sig = ed.sign(b"nearcard/sealed-route/v1\0" + jcs(route)).signature
    seal_to = X25519Private.generate().public_key if args.tamper == "route" else X25519Public(remote_static)
    sealed = b64(SealedBox(seal_to).encrypt(jcs({"route": route, "signature": b64(route_sig)})))
    payload = {"version": 1, "cardFields": shown, "senderDID": did_key.did, "timestamp": now, "sdProof": sd_proof,
               "sealedRoute": sealed, "pubKey": b64(bytes(x_static.public_key)), "signPubKey": b64(bytes(ed.verify_key)),
               "receiver": P256().did if args.tamper == "receiver" else peer["did"], "nonce": b64u(os.urandom(16)),
               "sessionBinding": b64u(os.urandom(32) if args.tamper == "binding" else h)}
    frame = {"type": "card", "payload": payload}
    if message:
        payload["ephemeralMessageHash"] = sha256(message.encode()).hex()
        frame["message"] = message
    payload["payloadSignature"] = b64(did_key.sign(b"nearcard/proximity-payload/v1\0" + jcs(payload)))
    send(frame)

    # Their card, checked as §9 says.
    theirs = recv()
    if theirs["type"] == "abort":
        report["aborted"] = theirs
        print(json.dumps(report)); return 1
    assert theirs["type"] == "card", theirs
    p = theirs["payload"]
    sig = b64d(p["payloadSignature"])
    unsigned = {k: v for k, v in p.items() if k != "payloadSignature"}
    checks = {
        "signature": verify_p256(p["senderDID"], sig, b"nearcard/proximity-payload/v1\0" + jcs(unsigned)),
        "sender": p["senderDID"] == peer["did"],
        "receiver": p["receiver"] == did_key.did,
        "binding": b64ud(p["sessionBinding"]) == h,
        "pubKey": b64d(p["pubKey"]) == remote_static,
        "signPubKey": b64d(p["signPubKey"]) == peer_sign,
        "timestamp": abs(p["timestamp"] - now) <= 300,
        "message": p.get("ephemeralMessageHash") == (sha256(theirs["message"].encode()).hex() if "message" in theirs else None),
    }
    parts = p["sdProof"].split("~")
    jh, jc, js = parts[0].split(".")
    jclaims = json.loads(b64ud(jc))
    checks["sdJwtSignature"] = verify_p256(jclaims["iss"], b64ud(js), (jh + "." + jc).encode()) and jclaims["iss"] == p["senderDID"]
    opened = {}
    for disc in parts[1:-1]:
        assert b64u(sha256(disc.encode())) in jclaims["_sd"], "a disclosure the JWT does not commit to"
        _salt, name, value = json.loads(b64ud(disc))
        opened[name] = value
    checks["disclosures"] = opened == p["cardFields"] and len(jclaims["_sd"]) == 7
    inner = json.loads(SealedBox(x_static).decrypt(b64d(p["sealedRoute"])))
    r = inner["route"]
    VerifyKey(b64d(r["signPubKey"])).verify(b"nearcard/sealed-route/v1\0" + jcs(r), b64d(inner["signature"]))
    checks["route"] = r["did"] == peer["did"] and r["recipient"] == did_key.did and r["signPubKey"] == p["signPubKey"] and r["fingerprint"] == peer_fp
    report.update(checks=checks, theirCard=p["cardFields"], theirMessage=theirs.get("message"), hiddenFields=7 - len(opened))
    if not all(checks.values()):
        send({"type": "abort", "code": "bad_card", "reason": "python peer: " + ",".join(k for k, v in checks.items() if not v)})
        print(json.dumps(report)); return 1
    send({"type": "done"})
    done = recv()
    report["completed"] = done["type"] == "done"
    if done["type"] == "abort":
        report["aborted"] = done
    if args.record:
        with open(args.record, "w") as f:
            json.dump([b64(x) for x in wire.sent], f)
    print(json.dumps(report))
    return 0 if report["completed"] else 1


def replay(args):
    """Replays a recorded session's frames as they were: the node's fresh ephemeral key makes every
    frame after the first undecryptable, so it must end the session. Exit 0 when the node refused."""
    frames = [b64d(x) for x in json.load(open(args.replay))]
    wire = Wire(args.host, args.port)
    accepted = 0
    try:
        wire.send(frames[0])
        accepted = 1
        for f in frames[1:]:
            wire.recv()  # whatever the node answers
            wire.send(f)
            accepted += 1
        wire.recv()
        closed = False
    except (ConnectionError, OSError, socket.timeout):
        closed = True
    print(json.dumps({"framesSent": accepted, "framesRecorded": len(frames), "closedByNode": closed}))
    return 0 if closed else 1


def mail_impostor(args):
    """Someone else answering at a contact's address (§15): a Noise responder with its own key. Reports
    message 1's payload and every frame the sender sent after message 2 (a sender MUST send none)."""
    server = socket.create_server(("0.0.0.0", args.mail_impostor))
    server.settimeout(60)
    conn, _ = server.accept()
    conn.settimeout(15)
    wire = Wire.__new__(Wire)
    wire.sock, wire.buf, wire.sent = conn, b"", []
    noise = NoiseConnection.from_name(b"Noise_XX_25519_ChaChaPoly_SHA256")
    noise.set_as_responder()
    noise.set_keypair_from_private_bytes(Keypair.STATIC, bytes(X25519Private.generate()))
    noise.set_prologue(b"nearcard-exchange")
    noise.start_handshake()
    payload1 = noise.read_message(wire.recv())
    wire.send(noise.write_message(b""))
    after = 0
    try:
        while True:
            wire.recv()
            after += 1
    except (ConnectionError, OSError, socket.timeout):
        pass
    print(json.dumps({"message1": payload1.decode(errors="replace"), "framesAfterMessage2": after}))
    return 0


def mail_stranger(args):
    """A node that is not a contact tries to deliver a follow-up message (§16)."""
    did_key = P256()
    x_static = X25519Private.generate()
    ed = SigningKey.generate()
    wire, noise, recipient_static = dial(args.host, args.port, x_static, b"nearcard-mail/1")
    envelope = {"version": 1, "id": b64u(os.urandom(16)), "from": did_key.did, "to": "did:key:zDnaeUnknown", "sentAt": int(time.time()),
                "text": "buy cheap followers"}
    envelope["signature"] = b64(ed.sign(b"nearcard/message/v1\0" + jcs(envelope)).signature)
    wire.send(noise.encrypt(jcs({"type": "deliver", "mailboxToken": b64u(os.urandom(32)), "envelope": envelope})))
    answer = json.loads(noise.decrypt(wire.recv()))
    print(json.dumps({"answer": answer, "recipientStatic": b64(recipient_static)}))
    return 0 if answer.get("type") == "ack" else 1


if __name__ == "__main__":
    sys.exit(main())
