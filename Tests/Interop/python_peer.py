#!/usr/bin/env python3
"""An independent Nearcard peer (protocol version 2), written from docs/PROTOCOL.md alone.

  python_peer.py HOST PORT [--name NAME] [--message TEXT] [--tamper WHAT] [--violate WHAT]
  python_peer.py --invite TEXT [--name NAME] [--message TEXT]   (§19: dial the invitation's first address)
  python_peer.py HOST PORT --recall-key B64URL --expect-did DID  (§6.2: dial as a contact that recognised the node)

Dials a Nearcard node as the initiator and runs the whole exchange of §5–§11: Noise XX with a fresh
static key for this session (`noiseprotocol`), hello / nonce / sas-reveal / decision / decision + card /
card / done / done / confirm, the identity proofs of §6.1 (ECDSA P-256 with `cryptography`), the sealed
identity of §6.2 (HMAC-SHA-256 + ChaCha20-Poly1305), the card checks of §9 and the sealed route of §10
(Ed25519 and sealed boxes with PyNaCl). Prints ONE JSON line (the report) on stdout:
  sas, myDid, myPubKey, myPresenceKey, peerDid, peerName, peerFingerprint, peerPubKey, peerSignPubKey,
  peerPresenceKey (from its card), peerSessionStatic (its per-session Noise key), graphEdge, checks
  (each of §9's checks: true/false), theirCard, theirMessage, hiddenFields, route {hints, expiresAt},
  completed (true once `confirm` arrived), confirmed, storedUnconfirmed, and on failure aborted
  {code, reason} (sent by the node, or by us with "by": "us"), declined, or closedWithoutAbort.

--recall-key dials as a contact: the hello carries no identity, the node MUST answer with
`sealedIdentity`, which this peer opens with the presence key (base64url, 16 bytes) and checks against
--expect-did; only then does it show its own identity, in sas-reveal (§6.2).
--tamper sends a deliberately wrong card (for negative tests):
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
  old-tag           message 1 tagged `nearcard/1` (§5: closed, no answer)
  hello-version-1   a hello with "version": 1 (§6/§13: unsupported_version)
  identity-twice    the identity in hello AND in sas-reveal (§6: protocol_error)
  no-identity       no identity in hello nor in sas-reveal (§6: protocol_error)
  invite-without-identity  an `invite` in a hello without identity (§6: protocol_error)
  reflected-proof   our identity signed with role "responder" (§6.1: bad_identity)
  early-decision    our decision sent right after sas-reveal, before the node's (§6 order: protocol_error)
--common-contacts DID,DID,... (an empty string: an empty set) offers the private common-contacts step
of §22 (`commonContacts: true` in our accepting decision); when the node's acceptance offered it too,
psi-1 … psi-4 run (Tests/Interop/psi.py) between the acceptances and our card, every received list
checked as §22.2's table says (a fault: our abort with its code), and the report gains
`commonContacts` (those of our DIDs the node also holds, sorted) and `peerSetBound` (the length of its
psi-3 list). Without the option the member is never sent, and a node that offers it exchanges as §6.
The report always says `peerOfferedCommonContacts` (whether the node's acceptance carried it).
--cut before-done|after-done ends the session (closing the socket) just before / just after sending our
`done` (§11's agreement: the node then holds nothing / holds the contact).
--state FILE keeps this peer's keys (and what it learnt of its peers) across runs, so a later run can
--query-edge EDGE (§11/§15: ask the node, over a Noise IK mail session, whether it holds that exchange)
or --mail-text TEXT (§15: deliver a follow-up with the route's mailbox token).
--mail-stranger opens a mail session as a stranger with a made-up token (with --peer-pubkey B64, the
node's real long-term key; without it, a random key: the node must not answer at all).
--mail-impostor PORT listens on PORT as someone else answering at a contact's address (§15) and
reports what the sender sent it: without the contact's key it cannot read message 1, and a sender MUST
stop after message 2, revealing nothing.
Exit 0 when the exchange completed (confirm received) or the mail operation succeeded, 1 otherwise.
"""
import argparse
import base64
import hashlib
import hmac
import json
import os
import socket
import struct
import sys
import time

sys.dont_write_bytecode = True  # importing psi must leave no __pycache__ in the worktree
import psi  # noqa: E402  (§22, beside this file)
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature, encode_dss_signature
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from nacl.public import PrivateKey as X25519Private, PublicKey as X25519Public, SealedBox
from nacl.signing import SigningKey, VerifyKey
from noise.connection import Keypair, NoiseConnection

# Its checks are assert statements: with -O (or PYTHONOPTIMIZE) they would pass anything.
if not __debug__:
    raise SystemExit("python_peer.py: run it without -O / PYTHONOPTIMIZE (its checks are asserts)")

B58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
# The card's fields as the spec lists them (§9), the one list every peer here reads: version 2's seven,
# and version 3's, which adds pronouns (§21). A version-3 receiver sets aside a field it does not know.
FIELDS = ["name", "email", "phone", "company", "title", "socialNetworks", "skills"]
FIELDS_V3 = FIELDS + ["pronouns", "photo"]
SD_SLOTS_V3 = 16  # §9: a version-3 proof's digests, real and decoy
TAG = b"nearcard/2"
MAIL_TAG = b"nearcard-mail/2"
PROLOGUE = b"nearcard-exchange"


def jcs(v) -> bytes:
    # Our messages hold only strings, integers, booleans, arrays and objects with ASCII keys:
    # for those, sorted keys and compact separators are exactly RFC 8785.
    return json.dumps(v, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def b64(b): return base64.b64encode(b).decode()
def b64d(s): return base64.b64decode(s, validate=True)
def b64u(b): return base64.urlsafe_b64encode(b).rstrip(b"=").decode()
def sha256(b): return hashlib.sha256(b).digest()


def b64ud(s):
    if not isinstance(s, str) or "=" in s or any(c not in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_" for c in s):
        raise ValueError("not base64url")
    out = base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))
    if b64u(out) != s:
        raise ValueError("non-canonical base64url")
    return out


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


def strict_json(raw: bytes):
    """§1: RFC 8259 strictly (no duplicate names) and exactly the JCS form."""
    def pairs(items):
        keys = [k for k, _ in items]
        if len(set(keys)) != len(keys):
            raise ValueError("duplicate member name")
        return dict(items)
    value = json.loads(raw.decode("utf-8"), object_pairs_hook=pairs)
    if jcs(value) != raw:
        raise ValueError("not in JCS form")
    return value


class P256:
    def __init__(self, scalar: bytes = None):
        self.key = ec.derive_private_key(int.from_bytes(scalar, "big"), ec.SECP256R1()) if scalar else ec.generate_private_key(ec.SECP256R1())
        self.compressed = self.key.public_key().public_bytes(Encoding.X962, PublicFormat.CompressedPoint)
        self.did = "did:key:z" + b58encode(bytes([0x80, 0x24]) + self.compressed)

    def scalar(self) -> bytes:
        return self.key.private_numbers().private_value.to_bytes(32, "big")

    def sign(self, data: bytes) -> bytes:
        r, s = decode_dss_signature(self.key.sign(data, ec.ECDSA(hashes.SHA256())))
        return r.to_bytes(32, "big") + s.to_bytes(32, "big")


def did_public_key(did: str):
    if not isinstance(did, str) or not did.startswith("did:key:z") or len(did.encode()) > 256:
        raise ValueError("not a did:key")
    raw = b58decode(did[len("did:key:z"):])
    if raw[:2] != bytes([0x80, 0x24]) or len(raw) != 35:
        raise ValueError("not a P-256 did:key")
    return ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), raw[2:]), raw[2:]


def verify_p256(did: str, sig: bytes, data: bytes) -> bool:
    try:
        key, _ = did_public_key(did)
        if len(sig) != 64:
            return False
        key.verify(encode_dss_signature(int.from_bytes(sig[:32], "big"), int.from_bytes(sig[32:], "big")), data, ec.ECDSA(hashes.SHA256()))
        return True
    except Exception:  # noqa: BLE001
        return False


def fingerprint(compressed: bytes, x25519: bytes, ed25519: bytes) -> str:
    return sha256(b"nearcard-fingerprint-v1\0" + compressed + x25519 + ed25519)[:8].hex()


def graph_edge(did_a: str, did_b: str, h: bytes) -> str:
    lo, hi = sorted([did_a.encode(), did_b.encode()])
    return sha256(b"nearcard/graph-edge/v1\0" + lo + b"\n" + hi + b"\n" + h)[:16].hex()


class Me:
    """This peer's long-term identity (§2) and presence key; kept in --state FILE when given."""

    def __init__(self, name, state_file=None):
        self.state_file = state_file
        self.peers = {}
        saved = None
        if state_file and os.path.exists(state_file) and os.path.getsize(state_file) > 0:
            saved = json.load(open(state_file))
        if saved:
            self.did_key = P256(b64d(saved["p256"]))
            self.x = X25519Private(b64d(saved["x25519"]))
            self.ed = SigningKey(b64d(saved["ed25519"]))
            self.presence_key = b64ud(saved["presenceKey"])
            self.name = saved.get("name", name)
            self.peers = saved.get("peers", {})
        else:
            self.did_key, self.x, self.ed = P256(), X25519Private.generate(), SigningKey.generate()
            self.presence_key = os.urandom(16)
            self.name = name
        self.did = self.did_key.did
        self.pub = bytes(self.x.public_key)
        self.sign_pub = bytes(self.ed.verify_key)
        self.fp = fingerprint(self.did_key.compressed, self.pub, self.sign_pub)
        if state_file and not saved:
            self.save()  # the keys outlive this run (a later --query-edge / --mail-text must use the same ones)

    def save(self):
        if not self.state_file:
            return
        with open(self.state_file, "w") as f:
            json.dump({"p256": b64(self.did_key.scalar()), "x25519": b64(bytes(self.x)), "ed25519": b64(bytes(self.ed)),
                       "presenceKey": b64u(self.presence_key), "name": self.name, "did": self.did, "peers": self.peers}, f, indent=1)

    def identity(self, role: str, h: bytes, name=True) -> dict:
        """§6.1: {did, name?, pubKey, signPubKey, signature}, signed with role and handshakeHash."""
        ident = {"did": self.did, "pubKey": b64(self.pub), "signPubKey": b64(self.sign_pub)}
        if name and self.name:
            ident["name"] = self.name
        signed = dict(ident, role=role, handshakeHash=b64u(h))
        ident["signature"] = b64(self.did_key.sign(b"nearcard/session-auth/v2\0" + jcs(signed)))
        return ident


def check_identity(ident, role: str, h: bytes, my_did: str):
    """§6.1, the receiver's side: returns (identity, fingerprint) or raises (code, reason)."""
    if not isinstance(ident, dict):
        raise PeerFault("protocol_error", "identity is not an object")
    allowed, required = {"did", "name", "pubKey", "signPubKey", "signature"}, {"did", "pubKey", "signPubKey", "signature"}
    if not required <= set(ident) or not set(ident) <= allowed or not all(isinstance(v, str) for v in ident.values()):
        raise PeerFault("protocol_error", "identity members: %s" % sorted(ident))
    # §13: a limit comes first (`did` at most 256 bytes, `name` at most 64 characters).
    if len(ident["did"].encode()) > 256 or len(ident.get("name", "")) > 64:
        raise PeerFault("too_large", "identity: did over 256 bytes or name over 64 characters")
    try:
        pub, sign_pub, sig = b64d(ident["pubKey"]), b64d(ident["signPubKey"]), b64d(ident["signature"])
    except Exception:  # noqa: BLE001
        raise PeerFault("protocol_error", "identity: bad base64")
    if len(pub) != 32 or len(sign_pub) != 32 or len(sig) != 64:
        raise PeerFault("protocol_error", "identity: wrong key or signature length")
    try:
        _, compressed = did_public_key(ident["did"])
    except Exception:  # noqa: BLE001
        raise PeerFault("bad_identity", "not a P-256 did:key")
    if ident["did"] == my_did:
        raise PeerFault("bad_identity", "our own DID")
    signed = dict({k: v for k, v in ident.items() if k != "signature"}, role=role, handshakeHash=b64u(h))
    if not verify_p256(ident["did"], sig, b"nearcard/session-auth/v2\0" + jcs(signed)):
        raise PeerFault("bad_identity", "the DID proof does not verify")
    return ident, fingerprint(compressed, pub, sign_pub)


class PeerFault(Exception):
    def __init__(self, code, reason):
        super().__init__(reason)
        self.code, self.reason = code, reason


class Wire:
    def __init__(self, host=None, port=None, sock=None, timeout=15):
        self.sock = sock or socket.create_connection((host, port), timeout=timeout)
        self.sock.settimeout(timeout)
        self.buf = b""
        self.sent = []  # every frame, as it went on the wire (for --record)

    def send(self, data: bytes):
        self.sent.append(bytes(data))
        self.sock.sendall(struct.pack(">H", len(data)) + data)

    def recv(self) -> bytes:
        while True:
            if len(self.buf) >= 2:
                n = struct.unpack(">H", self.buf[:2])[0]
                if n == 0:
                    raise ConnectionError("zero-length frame")
                if len(self.buf) >= 2 + n:
                    frame, self.buf = self.buf[2:2 + n], self.buf[2 + n:]
                    return frame
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("connection closed")
            self.buf += chunk

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


def xx_initiator(session_static: X25519Private):
    noise = NoiseConnection.from_name(b"Noise_XX_25519_ChaChaPoly_SHA256")
    noise.set_as_initiator()
    noise.set_keypair_from_private_bytes(Keypair.STATIC, bytes(session_static))
    noise.set_prologue(PROLOGUE)
    noise.start_handshake()
    return noise


def dial(host, port, session_static, version: bytes = TAG, message3=b"", wire=None):
    """§5: connects and runs Noise XX as the initiator with this session's own static key, message 1
    carrying `version`. Returns the wire, the Noise connection, and the responder's per-session static
    key (read before message 3 discards it)."""
    wire = wire or Wire(host, port)
    noise = xx_initiator(session_static)
    wire.send(noise.write_message(version))
    payload2 = noise.read_message(wire.recv())
    remote_static = bytes(noise.noise_protocol.handshake_state.rs.public_bytes)
    if payload2:
        wire.close()
        raise PeerFault("protocol_error", "a payload in Noise message 2")
    wire.send(noise.write_message(message3))
    return wire, noise, remote_static


def responder(protocol_name: bytes, static: X25519Private):
    """A Noise responder with `static` as its static key and §5's prologue, ready to read message 1."""
    noise = NoiseConnection.from_name(protocol_name)
    noise.set_as_responder()
    noise.set_keypair_from_private_bytes(Keypair.STATIC, bytes(static))
    noise.set_prologue(PROLOGUE)
    noise.start_handshake()
    return noise


def ik_dial(host, port, my_static: X25519Private, responder_pub: bytes, wire=None):
    """§15: a mail session, Noise IK, the responder's long-term key known in advance. Returns (wire,
    noise); raises PeerFault("identity_mismatch") when message 2 does not decrypt (another node answered)
    — we then close at once, sending nothing more (§4)."""
    wire = wire or Wire(host, port)
    noise = NoiseConnection.from_name(b"Noise_IK_25519_ChaChaPoly_SHA256")
    noise.set_as_initiator()
    noise.set_keypair_from_private_bytes(Keypair.STATIC, bytes(my_static))
    noise.set_keypair_from_public_bytes(Keypair.REMOTE_STATIC, responder_pub)
    noise.set_prologue(PROLOGUE)
    noise.start_handshake()
    wire.send(noise.write_message(MAIL_TAG))
    msg2 = wire.recv()
    try:
        payload2 = noise.read_message(msg2)
    except Exception:  # noqa: BLE001
        wire.close()
        raise PeerFault("identity_mismatch", "message 2 does not decrypt: the node does not hold the route's key")
    if payload2:
        wire.close()
        raise PeerFault("protocol_error", "a payload in IK message 2")
    assert noise.handshake_finished
    return wire, noise


def build_card(me: Me, peer_did: str, peer_pub: bytes, h: bytes, name: str, message, tamper=None, violate=None, version=2, extra=None):
    """§9 + §10: our ProximityPayload, its card frame, and the route's mailbox token. Version 3 (§21):
    `extra` fields are added to the card and disclosed (a field the receiver may not know among them),
    and the proof holds 16 digests, real ones for what is disclosed and decoys for the rest."""
    now = int(time.time())
    card = {"name": name, "company": "Python Software", "email": "peer@example.org"}
    card.update(extra or {})
    if violate == "grapheme-name":
        card["name"] = "e" + "\u0301" * 300  # one grapheme, 301 code points
    if violate == "bidi-name":
        card["name"] = "Dora\u202eXoR"  # §1: an override would reverse what follows the name
    disclosed = {"name", "company"} | set(extra or {})
    if violate == "extra-member":  # §9: a profile holds platform, username, url? and nothing else
        card["socialNetworks"] = [{"platform": "p", "username": "u"}]
        disclosed.add("socialNetworks")
    digests, disclosures = [], []
    # Version 2 commits to each of its seven fields (absent ones to null); version 3 only to those disclosed.
    committed = FIELDS if version == 2 else [f for f in FIELDS_V3 + sorted(extra or {}) if f in disclosed and f in card]
    for f in dict.fromkeys(committed):
        disc = b64u(jcs([b64u(os.urandom(16)), f, card.get(f)]))
        digests.append(b64u(sha256(disc.encode())))
        if f in disclosed or (violate == "null-disclosure" and f == "phone"):
            disclosures.append(disc)
    while version >= 3 and len(digests) < SD_SLOTS_V3:
        digests.append(b64u(os.urandom(32)))  # a decoy (RFC 9901 §4.2.5)
    header = b64u(jcs({"alg": "ES256", "typ": "nearcard-card+sd-jwt"}))
    claims = b64u(jcs({"iss": me.did, "iat": now, "_sd_alg": "sha-256", "_sd": sorted(digests)}))
    jwt = header + "." + claims + "." + b64u(me.did_key.sign((header + "." + claims).encode()))
    sd_proof = "~".join([jwt] + disclosures) + "~"
    shown = {k: v for k, v in card.items() if k in disclosed}
    if violate == "extra-member":  # shown with a member the disclosure did not commit to
        shown["socialNetworks"] = [{"platform": "p", "username": "u", "x": "y"}]
    if tamper == "field":
        shown["email"] = card["email"]
    token = os.urandom(32)
    route = {"version": 1, "did": me.did, "pubKey": b64(me.pub), "signPubKey": b64(me.sign_pub),
             "fingerprint": me.fp, "mailboxToken": b64u(token), "recipient": peer_did, "issuedAt": now,
             "expiresAt": now + 86400, "hints": []}  # §10 rule 1: a one-shot dialler gives no hints
    if violate == "nine-hints":  # §9: at most 8 (too_large, §13)
        route["hints"] = [{"host": f"192.0.2.{i}", "port": 7447} for i in range(1, 10)]
    route_sig = me.ed.sign(b"nearcard/sealed-route/v1\0" + jcs(route)).signature
    # §10: sealed to the receiver's X25519 pubKey — its long-term key, from its identity (§6.1).
    seal_to = X25519Private.generate().public_key if tamper == "route" else X25519Public(peer_pub)
    sealed = b64(SealedBox(seal_to).encrypt(jcs({"route": route, "signature": b64(route_sig)})))
    payload = {"version": 1, "cardFields": shown, "senderDID": me.did, "timestamp": now, "sdProof": sd_proof,
               "sealedRoute": sealed, "pubKey": b64(me.pub), "signPubKey": b64(me.sign_pub),
               "receiver": P256().did if tamper == "receiver" else peer_did, "nonce": b64u(os.urandom(16)),
               "sessionBinding": b64u(os.urandom(32) if tamper == "binding" else h)}
    frame = {"type": "card", "payload": payload, "presenceKey": b64u(me.presence_key)}
    if message:
        payload["ephemeralMessageHash"] = sha256(message.encode()).hex()
        frame["message"] = message
    payload["payloadSignature"] = b64(me.did_key.sign(b"nearcard/proximity-payload/v1\0" + jcs(payload)))
    return frame


def check_card(me: Me, theirs: dict, peer: dict, peer_fp: str, h: bytes, session_static: bytes, version=2):
    """§9 and §10, the receiver's side. Returns (checks, opened fields, route, notes). Version 3: the
    proof holds 16 digests, and a disclosed field this peer does not know is checked, then set aside."""
    p = theirs["payload"]
    now = int(time.time())
    sig = b64d(p["payloadSignature"])
    unsigned = {k: v for k, v in p.items() if k != "payloadSignature"}
    checks = {
        "signature": verify_p256(p["senderDID"], sig, b"nearcard/proximity-payload/v1\0" + jcs(unsigned)),
        "sender": p["senderDID"] == peer["did"],
        "receiver": p["receiver"] == me.did,
        "binding": b64ud(p["sessionBinding"]) == h,
        # §9 says "pubKey equals the Noise remote static key"; in v2 that key is per session (§5), so
        # the payload's long-term pubKey is compared with the identity's (§6.1) instead.
        "pubKey": p["pubKey"] == peer["pubKey"],
        "signPubKey": p["signPubKey"] == peer["signPubKey"],
        "timestamp": isinstance(p["timestamp"], int) and abs(p["timestamp"] - now) <= 300,
        "nonce": len(b64ud(p["nonce"])) == 16,
        "message": p.get("ephemeralMessageHash") == (sha256(theirs["message"].encode()).hex() if "message" in theirs else None),
        "presenceKey": len(b64ud(theirs.get("presenceKey", "!"))) == 16 if theirs.get("presenceKey") else False,
    }
    notes = {"payloadPubKeyIsNoiseStatic": b64d(p["pubKey"]) == session_static}
    parts = p["sdProof"].split("~")
    jh, jc, js = parts[0].split(".")
    jheader, jclaims = json.loads(b64ud(jh)), json.loads(b64ud(jc))
    checks["sdJwtSignature"] = (jheader.get("alg") == "ES256" and jheader.get("typ") == "nearcard-card+sd-jwt"
                                and verify_p256(jclaims["iss"], b64ud(js), (jh + "." + jc).encode()) and jclaims["iss"] == p["senderDID"]
                                and isinstance(jclaims.get("iat"), int) and jclaims.get("_sd_alg") == "sha-256")
    opened, ok = {}, True
    for disc in parts[1:-1]:
        if b64u(sha256(disc.encode())) not in jclaims["_sd"] or disc in parts[1:-1][:parts[1:-1].index(disc)]:
            ok = False
            continue
        _salt, name, value = json.loads(b64ud(disc))
        if (version == 2 and name not in FIELDS) or name in opened or value is None:
            ok = False
        opened[name] = value
    slots = 7 if version == 2 else SD_SLOTS_V3
    checks["disclosures"] = ok and parts[-1] == "" and opened == p["cardFields"] and len(set(jclaims["_sd"])) == slots == len(jclaims["_sd"])
    if version >= 3:
        notes["unknownFields"] = sorted(k for k in opened if k not in FIELDS_V3)
        for k in notes["unknownFields"]:
            del opened[k]
    route = None
    try:
        inner = json.loads(SealedBox(me.x).decrypt(b64d(p["sealedRoute"])))
        r = inner["route"]
        VerifyKey(b64d(r["signPubKey"])).verify(b"nearcard/sealed-route/v1\0" + jcs(r), b64d(inner["signature"]))
        checks["route"] = (r["did"] == peer["did"] and r["recipient"] == me.did and r["signPubKey"] == p["signPubKey"]
                           and r["pubKey"] == peer["pubKey"] and r["fingerprint"] == peer_fp and r["expiresAt"] > now)
        route = r
    except Exception:  # noqa: BLE001
        checks["route"] = False
    return checks, opened, route, notes


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
    ap.add_argument("--recall-key", metavar="B64URL", help="the node's presence key (§6.2): dial as a contact that recognised it")
    ap.add_argument("--expect-did", metavar="DID", help="the DID the node must prove (with --recall-key: the recognised contact's)")
    ap.add_argument("--expect-fp", metavar="FP", help="the fingerprint the node must prove (§6.1)")
    ap.add_argument("--cut", choices=["before-done", "after-done"], help="close just before / after sending our done (§11)")
    ap.add_argument("--state", metavar="FILE", help="keep this peer's keys and what it learnt in FILE across runs")
    ap.add_argument("--peer-pubkey", metavar="B64", help="the node's long-term X25519 key (mail sessions), if not in --state")
    ap.add_argument("--query-edge", metavar="EDGE", help="ask the node over mail (§15 query) whether it holds this exchange")
    ap.add_argument("--mail-text", metavar="TEXT", help="deliver a follow-up (§15) to the node, with the route learnt in --state")
    ap.add_argument("--resend", action="store_true", help="with --mail-text: deliver the same envelope twice (expect duplicate)")
    ap.add_argument("--mail-stranger", action="store_true",
                    help="open a mail session (nearcard-mail/2, IK) as a stranger with a made-up token; print how the node answers")
    ap.add_argument("--violate", choices=["grapheme-name", "long-message", "control-message", "pretty-hello", "message3-payload",
                                          "null-disclosure", "old-tag", "hello-version-1", "identity-twice", "no-identity",
                                          "invite-without-identity", "reflected-proof", "early-decision", "nine-hints", "extra-member", "bidi-name"])
    ap.add_argument("--common-contacts", metavar="DID,DID,...",
                    help="offer the private common-contacts step (§22) with these DIDs as our set (\"\" = an empty set)")
    ap.add_argument("--speak", type=int, choices=[2, 3], default=2,
                    help="the exchange version to speak (§21): dialling, the hello's; listening, the highest accepted")
    ap.add_argument("--extra", action="append", default=[], metavar="FIELD=VALUE",
                    help="version 3: a field to add to our card and disclose (pronouns, or one the node does not know)")
    ap.add_argument("--listen", type=int, metavar="PORT", help="answer exchanges on 127.0.0.1:PORT as a responder (see --sessions)")
    ap.add_argument("--sessions", type=int, default=1, help="with --listen: how many sessions to answer before exiting")
    ap.add_argument("--mail-impostor", type=int, metavar="PORT")
    ap.add_argument("--bind", default="0.0.0.0", help="--mail-impostor's address (default 0.0.0.0)")
    args = ap.parse_args()
    if args.listen:
        return listen(args)
    if args.mail_impostor:
        return mail_impostor(args)
    if args.mail_stranger:
        return mail_stranger(args)
    if args.replay:
        return replay(args)
    if args.query_edge or args.mail_text:
        return mail_contact(args)
    return exchange(args)


def exchange(args):
    report = {}
    me = Me(args.name, args.state)
    violate = args.violate
    recall = b64ud(args.recall_key) if args.recall_key else None
    if recall is not None and len(recall) != 16:
        raise SystemExit("--recall-key: a presence key is 16 bytes")

    invitation = None
    if args.invite:
        # §19: nearcard-invite: ‖ base64url(JCS({v, fp, name?, addrs, id, secret, exp}))
        invitation = json.loads(b64ud(args.invite.strip()[len("nearcard-invite:"):]))
        assert invitation["v"] == 1, invitation
        host, _, port = invitation["addrs"][0].rpartition(":")
        args.host, args.port = host.strip("[]"), int(port)
    expect_fp = invitation["fp"] if invitation else args.expect_fp
    # §22: our set, when we offer the step (each DID once, in the order given).
    common_set = None
    if args.common_contacts is not None:
        common_set = list(dict.fromkeys(d.strip() for d in args.common_contacts.split(",") if d.strip()))
    session_static = X25519Private.generate()  # §5: a fresh Noise static key per session
    try:
        wire, noise, remote_static = dial(args.host, args.port, session_static,
                                          b"nearcard/1" if violate == "old-tag" else TAG,
                                          message3=b"surprise" if violate == "message3-payload" else b"")
    except (ConnectionError, OSError) as e:
        report.update(closedWithoutAbort=True, error=str(e))
        print(json.dumps(report)); return 1
    except PeerFault as e:
        report.update(closedWithoutAbort=True, refused={"code": e.code, "reason": e.reason})
        print(json.dumps(report)); return 1
    h = noise.get_handshake_hash()
    report.update(myDid=me.did, myPubKey=b64(me.pub), myPresenceKey=b64u(me.presence_key), peerSessionStatic=b64(remote_static),
                  handshakeHash=b64u(h))

    def finish(code=1):
        wire.close()
        me.save()
        print(json.dumps(report))
        return code

    def send(msg, pretty=False):
        wire.send(noise.encrypt(json.dumps(msg, indent=2).encode() if pretty else jcs(msg)))

    def abort(code, reason):
        try:
            send({"type": "abort", "code": code, "reason": reason})
        except OSError:
            pass
        report["aborted"] = {"code": code, "reason": reason, "by": "us"}

    class Ended(Exception):
        pass

    def recv(*types):
        """The next message, which must be one of `types` (else we abort protocol_error); an abort
        from the node ends the run with its report."""
        try:
            raw = wire.recv()
        except (ConnectionError, OSError) as e:
            report["closedWithoutAbort"] = True
            report["error"] = str(e)
            raise Ended()
        try:
            plain = noise.decrypt(raw)
        except Exception:  # noqa: BLE001
            abort("decrypt_failed", "a transport message failed authentication")
            raise Ended()
        try:
            msg = strict_json(plain)
        except Exception as e:  # noqa: BLE001
            abort("protocol_error", "python peer: %s" % e)
            raise Ended()
        if msg.get("type") == "abort":
            report["aborted"] = msg
            raise Ended()
        if msg.get("type") not in types:
            abort("protocol_error", "python peer: %s where %s was due" % (msg.get("type"), "/".join(types)))
            raise Ended()
        return msg

    def run_psi(dids, peer_did):
        """§22.2 as the initiator: psi-1 out; psi-2 and psi-3 in (each checked by psi.py: entries, their
        encodings, bucket and answer lengths, repeats, order; a fault is our abort with its code); psi-4 out."""
        # §22.1: neither side's own DID can be common; §22.3: at most 1,000 (the first given).
        mine = [d for d in dids if d not in (me.did, peer_did)][:psi.MAXIMUM_SET_SIZE]
        session = psi.Session("initiator", mine)
        for out in session.start():
            send(out)
        try:
            for t in ("psi-2", "psi-3"):
                for out in session.handle(recv(t)):
                    send(out)
        except psi.PSIError as e:
            abort(e.code, "python peer: " + e.reason); raise Ended()
        if session.result is None:
            abort("protocol_error", "python peer: the common-contacts step did not finish"); raise Ended()
        report["commonContacts"] = sorted(session.result["common"])
        report["peerSetBound"] = session.result["peerSetBound"]

    try:
        # hello (initiator): commit to the SAS nonce (§7); our identity, unless we recognised the node (§6.2).
        n_i = os.urandom(32)
        hello = {"type": "hello", "version": 1 if violate == "hello-version-1" else args.speak,
                 "sasCommit": b64u(sha256(b"nearcard/sas-commit/v1\0" + h + n_i))}
        if (recall is None and violate not in ("no-identity", "invite-without-identity")) or violate == "identity-twice":
            hello["identity"] = me.identity("responder" if violate == "reflected-proof" else "initiator", h)
        if invitation or violate == "invite-without-identity":
            secret = b64ud(invitation["secret"]) if invitation else os.urandom(16)
            proof = hmac.new(secret, b"nearcard/invite/v1\0" + h, hashlib.sha256).digest()
            hello["invite"] = {"id": invitation["id"] if invitation else b64u(os.urandom(8)), "proof": b64u(proof)}
        send(hello, pretty=violate == "pretty-hello")

        nonce = recv("nonce")
        extra = set(nonce) - {"type", "sasNonce", "sealedIdentity"}
        if extra or "sasNonce" not in nonce:
            abort("protocol_error", "nonce members"); raise Ended()
        n_r = b64ud(nonce["sasNonce"])
        peer, peer_fp = None, None
        asked = "identity" not in hello
        if ("sealedIdentity" in nonce) != asked:
            # §6.2: a node that does not prove itself as the contact recognised is not that contact.
            if asked:
                abort("identity_mismatch", "no sealedIdentity after a hello without identity")
            else:
                abort("protocol_error", "a sealedIdentity nobody asked for")
            raise Ended()
        if asked and recall is not None:
            # §6.2: open the seal with the presence key of the contact we recognised.
            sealed = b64ud(nonce["sealedIdentity"])
            report["sealedIdentityBytes"] = len(sealed)
            key = hmac.new(recall, b"nearcard/recall/v2\0" + h, hashlib.sha256).digest()
            try:
                # Revision 2.1 pads it with zero bytes to 512 or 1,008 bytes: the identity precedes them.
                opened = strict_json(ChaCha20Poly1305(key).decrypt(b"\0" * 12, sealed, b"").rstrip(b"\0"))
                peer, peer_fp = check_identity(opened, "responder", h, me.did)
            except PeerFault as e:
                # Opened, it is an identity like any other (§6.1): malformed or unverified by its own code.
                abort(e.code, "the sealed identity: " + e.reason); raise Ended()
            except Exception:  # noqa: BLE001
                abort("identity_mismatch", "the sealed identity does not open with the presence key"); raise Ended()
            if args.expect_did and peer["did"] != args.expect_did:
                abort("identity_mismatch", "the sealed identity names another DID"); raise Ended()
            report["sealedIdentityOpened"] = True
        if peer and expect_fp and peer_fp != expect_fp:
            abort("identity_mismatch", "not the node expected"); raise Ended()

        reveal = {"type": "sas-reveal", "nonce": b64u(n_i)}
        if (asked and violate != "no-identity") or violate == "identity-twice":
            reveal["identity"] = me.identity("initiator", h)
        send(reveal)
        d = sha256(b"nearcard/sas/v1\0" + h + n_i + n_r)
        sas = int.from_bytes(d[:4], "big") % 1000000
        report["sas"] = "%03d %03d" % (sas // 1000, sas % 1000)
        # Our acceptance; with --common-contacts it offers the step (§22.3), and never without.
        my_decision = {"type": "decision", "accept": True}
        if common_set is not None:
            my_decision["commonContacts"] = True
        if violate == "early-decision":
            send(my_decision)

        decision = recv("decision")
        if set(decision) - {"type", "accept", "reason", "identity", "commonContacts"} or not isinstance(decision.get("accept"), bool):
            abort("protocol_error", "decision members"); raise Ended()
        # §22.3: every v2 receiver accepts the member; a boolean, only in an acceptance.
        if "commonContacts" in decision and not isinstance(decision["commonContacts"], bool):
            abort("protocol_error", "decision: commonContacts is not a boolean"); raise Ended()
        if not decision["accept"]:
            if "identity" in decision:
                report["identityInRefusal"] = True  # §6: refused with protocol_error; we report it either way
            report["declined"] = decision
            if "commonContacts" in decision:
                report["commonContactsInRefusal"] = True
                abort("protocol_error", "decision: a refusal offers no common contacts")
            raise Ended()
        report["peerOfferedCommonContacts"] = decision.get("commonContacts") is True
        if peer is None:
            if "identity" not in decision:
                abort("protocol_error", "an accepting decision without identity"); raise Ended()
            try:
                peer, peer_fp = check_identity(decision["identity"], "responder", h, me.did)
            except PeerFault as e:
                abort(e.code, e.reason); raise Ended()
            if expect_fp and peer_fp != expect_fp:
                report["peerFingerprint"] = peer_fp
                abort("identity_mismatch", "not the node the invitation names" if invitation else "not the node expected"); raise Ended()
            if args.expect_did and peer["did"] != args.expect_did:
                abort("identity_mismatch", "not the DID expected"); raise Ended()
        elif "identity" in decision:
            abort("protocol_error", "an identity twice (sealed, then in the decision)"); raise Ended()
        report.update(peerDid=peer["did"], peerName=peer.get("name"), peerFingerprint=peer_fp, peerPubKey=peer["pubKey"],
                      peerSignPubKey=peer["signPubKey"], graphEdge=graph_edge(me.did, peer["did"], h),
                      sessionStaticIsLongTerm=b64(remote_static) == peer["pubKey"])

        # Our decision and, with it, our card (§8) — or, when both acceptances offered it, the
        # common-contacts step first, our card right after psi-4 (§22.3).
        if violate != "early-decision":
            send(my_decision)
        if common_set is not None and report["peerOfferedCommonContacts"]:
            run_psi(common_set, peer["did"])
        message = {"long-message": "a" * 141, "control-message": "see you\r\nat 3"}.get(violate, args.message)
        extra = dict(x.split("=", 1) for x in args.extra)
        send(build_card(me, peer["did"], b64d(peer["pubKey"]), h, me.name, message, args.tamper, violate, version=args.speak, extra=extra))

        theirs = recv("card")
        if set(theirs) - {"type", "payload", "message", "presenceKey"} or "presenceKey" not in theirs:
            abort("protocol_error", "card members: %s" % sorted(theirs)); raise Ended()
        checks, opened, route, notes = check_card(me, theirs, peer, peer_fp, h, remote_static, version=args.speak)
        report.update(checks=checks, theirCard=theirs["payload"]["cardFields"], theirMessage=theirs.get("message"),
                      hiddenFields=(7 if args.speak == 2 else SD_SLOTS_V3) - len(opened), peerPresenceKey=theirs.get("presenceKey"),
                      notes=notes, version=args.speak)
        if route:
            report["route"] = {"hints": route["hints"], "expiresAt": route["expiresAt"]}
        if not all(checks.values()):
            abort("bad_card", "python peer: " + ",".join(k for k, v in checks.items() if not v)); raise Ended()

        recv("done")  # the responder verified our card (§11 step 1)
        report["responderDone"] = True
        # §11 step 2: store unconfirmed, then send done.
        me.peers[peer["did"]] = {"name": peer.get("name"), "pubKey": peer["pubKey"], "signPubKey": peer["signPubKey"],
                                 "presenceKey": theirs.get("presenceKey"), "edge": report["graphEdge"], "confirmed": False,
                                 "mailboxToken": route["mailboxToken"] if route else None, "host": args.host, "port": args.port}
        if args.cut == "before-done":
            del me.peers[peer["did"]]
            report["cut"] = "before-done"
            raise Ended()
        report["storedUnconfirmed"] = True
        me.save()
        send({"type": "done"})
        if args.cut == "after-done":
            report["cut"] = "after-done"
            raise Ended()
        recv("confirm")
        me.peers[peer["did"]]["confirmed"] = True
        report["completed"] = report["confirmed"] = True
    except Ended:
        pass
    except PeerFault as e:
        abort(e.code, e.reason)
    if args.record:
        with open(args.record, "w") as f:
            json.dump([b64(x) for x in wire.sent], f)
    return finish(0 if report.get("completed") else 1)


def listen(args):
    """The responder's side of §5–§11, for a node that dials us (by address): Noise XX with a fresh
    static key per session, then nonce / decision (accepting, with our identity) / card + done / confirm.
    A hello of a version above --speak is answered with abort unsupported_version (§13, §21), as a node
    of that version would. Prints one JSON line per session: version (the hello's), aborted, completed,
    checks, theirCard, notes."""
    me = Me(args.name, args.state)
    server = socket.create_server(("127.0.0.1", args.listen))
    server.settimeout(120)
    print(json.dumps({"listening": args.listen, "did": me.did}), flush=True)
    code = 1
    for _ in range(args.sessions):
        conn, _addr = server.accept()
        wire = Wire(sock=conn)
        report = {}
        try:
            noise = responder(b"Noise_XX_25519_ChaChaPoly_SHA256", X25519Private.generate())
            if noise.read_message(wire.recv()) != TAG:
                raise PeerFault("protocol_error", "message 1 is not tagged nearcard/2")
            wire.send(noise.write_message(b""))
            if noise.read_message(wire.recv()) != b"":
                raise PeerFault("protocol_error", "a payload in message 3")
            h = noise.get_handshake_hash()

            def send(msg):
                wire.send(noise.encrypt(jcs(msg)))

            def recv(kind):
                msg = strict_json(noise.decrypt(wire.recv()))
                if msg.get("type") == "abort":
                    report["aborted"] = msg
                    raise PeerFault(None, msg.get("reason"))
                if msg.get("type") != kind:
                    raise PeerFault("protocol_error", "%s where %s was due" % (msg.get("type"), kind))
                return msg

            hello = recv("hello")
            report["version"] = hello.get("version")
            if hello.get("version") not in range(2, args.speak + 1):
                raise PeerFault("unsupported_version", "this peer speaks hello version %s" % " and ".join(map(str, range(2, args.speak + 1))))
            if "identity" not in hello:
                raise PeerFault("protocol_error", "this test peer answers only a hello with an identity")
            peer, peer_fp = check_identity(hello["identity"], "initiator", h, me.did)
            n_r = os.urandom(32)
            send({"type": "nonce", "sasNonce": b64u(n_r)})
            reveal = recv("sas-reveal")
            n_i = b64ud(reveal["nonce"])
            if b64u(sha256(b"nearcard/sas-commit/v1\0" + h + n_i)) != hello["sasCommit"]:
                raise PeerFault("bad_commitment", "the revealed nonce does not open the hello's commitment")
            d = sha256(b"nearcard/sas/v1\0" + h + n_i + n_r)
            sas = int.from_bytes(d[:4], "big") % 1000000
            report["sas"] = "%03d %03d" % (sas // 1000, sas % 1000)
            send({"type": "decision", "accept": True, "identity": me.identity("responder", h)})
            if not recv("decision").get("accept"):
                raise PeerFault(None, "declined")
            theirs = recv("card")
            version = hello["version"]
            checks, opened, route, notes = check_card(me, theirs, peer, peer_fp, h, b"", version=version)
            report.update(checks=checks, theirCard=theirs["payload"]["cardFields"], notes=notes, peerDid=peer["did"])
            if not all(checks.values()):
                raise PeerFault("bad_card", "python peer: " + ",".join(k for k, v in checks.items() if not v))
            extra = dict(x.split("=", 1) for x in args.extra) if version >= 3 else {}
            send(build_card(me, peer["did"], b64d(peer["pubKey"]), h, me.name, args.message, version=version, extra=extra))
            send({"type": "done"})
            recv("done")
            send({"type": "confirm"})
            report["completed"] = True
            code = 0
        except PeerFault as e:
            if e.code:
                report["aborted"] = {"code": e.code, "reason": e.reason, "by": "us"}
                try:
                    send({"type": "abort", "code": e.code, "reason": e.reason})
                except Exception:  # noqa: BLE001  (no transport yet: closed without an abort, §4)
                    pass
        except (ConnectionError, OSError, ValueError) as e:
            report["error"] = str(e)
        finally:
            wire.close()
        print(json.dumps(report), flush=True)
    me.save()
    return code


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
    """Someone else answering at a contact's address (§15). The sender's IK message 1 is encrypted to the
    contact's long-term key, which the impostor does not hold: it tries to read it (as an XX message 1
    with a clear tag, then as an IK message 1 with its own key), answers with a message 2 it made up,
    and reports every frame the sender sent after that (a sender MUST send none)."""
    server = socket.create_server((args.bind, args.mail_impostor))
    server.settimeout(60)
    conn, _ = server.accept()
    wire = Wire(sock=conn)
    msg1 = wire.recv()
    clear = msg1[32:]
    report = {"message1Length": len(msg1),
              "message1": clear.decode() if clear.isascii() and clear.decode().isprintable() else None}
    impostor_key = X25519Private.generate()
    if bytes(clear) == MAIL_TAG:
        # A sender still running mail over XX with the tag in the clear (not §15's IK): answer as an XX
        # responder with our own static key, as any node could.
        report["sessionKind"] = "xx"
        xx = responder(b"Noise_XX_25519_ChaChaPoly_SHA256", impostor_key)
        xx.read_message(msg1)
        wire.send(xx.write_message(b""))
    else:
        report["sessionKind"] = "ik"
        ik = responder(b"Noise_IK_25519_ChaChaPoly_SHA256", impostor_key)
        try:
            report["message1"] = bytes(ik.read_message(msg1)).decode(errors="replace")
            report["learntSenderStatic"] = b64(bytes(ik.noise_protocol.handshake_state.rs.public_bytes))
        except Exception:  # noqa: BLE001
            report["readMessage1"] = False  # encrypted to the contact's key, which we do not hold
        wire.send(os.urandom(48))  # what an IK message 2 looks like: e (32) ‖ an empty payload's tag (16)
    after = 0
    try:
        while True:
            wire.recv()
            after += 1
    except (ConnectionError, OSError, socket.timeout):
        pass
    report["framesAfterMessage2"] = after
    print(json.dumps(report))
    return 0


def mail_stranger(args):
    """A node that is not a contact tries to deliver a follow-up message (§15). With --peer-pubkey it
    knows the node's long-term key (so the IK handshake completes and the deliver is refused); without
    it the key is made up and the node must not answer at all."""
    did_key, x_static, ed = P256(), X25519Private.generate(), SigningKey.generate()
    responder = b64d(args.peer_pubkey) if args.peer_pubkey else bytes(X25519Private.generate().public_key)
    report = {"knewTheKey": bool(args.peer_pubkey)}
    try:
        wire, noise = ik_dial(args.host, args.port, x_static, responder)
    except (ConnectionError, OSError) as e:
        report.update(answer=None, closedWithoutAnswer=True, error=str(e))
        print(json.dumps(report)); return 1
    except PeerFault as e:
        report.update(answer=None, refused={"code": e.code, "reason": e.reason})
        print(json.dumps(report)); return 1
    envelope = {"version": 1, "id": b64u(os.urandom(16)), "from": did_key.did, "to": "did:key:zDnaeUnknown", "sentAt": int(time.time()),
                "text": "buy cheap followers"}
    envelope["signature"] = b64(ed.sign(b"nearcard/message/v1\0" + jcs(envelope)).signature)
    wire.send(noise.encrypt(jcs({"type": "deliver", "mailboxToken": b64u(os.urandom(32)), "envelope": envelope})))
    try:
        answer = json.loads(noise.decrypt(wire.recv()))
    except (ConnectionError, OSError) as e:
        report.update(answer=None, closedWithoutAnswer=True, error=str(e))
        print(json.dumps(report)); return 1
    report["answer"] = answer
    print(json.dumps(report))
    return 0 if answer.get("type") == "ack" else 1


def mail_contact(args):
    """§15 as the contact: a query about an exchange (§11) or a follow-up, over Noise IK with our
    long-term key to the node's long-term key (from --state, or --peer-pubkey)."""
    me = Me(args.name, args.state)
    peer = None
    if args.expect_did:
        peer = me.peers.get(args.expect_did)
    elif me.peers:
        peer = list(me.peers.values())[-1]
        args.expect_did = list(me.peers)[-1]
    responder = b64d(args.peer_pubkey) if args.peer_pubkey else (b64d(peer["pubKey"]) if peer else None)
    if responder is None:
        raise SystemExit("a mail session needs the node's long-term key: --state (after an exchange) or --peer-pubkey")
    host = args.host or (peer or {}).get("host")
    port = args.port or (peer or {}).get("port")
    report = {"myDid": me.did}
    try:
        wire, noise = ik_dial(host, port, me.x, responder)
    except (ConnectionError, OSError) as e:
        report.update(closedWithoutAnswer=True, error=str(e))
        print(json.dumps(report)); return 1
    except PeerFault as e:
        report.update(refused={"code": e.code, "reason": e.reason})
        print(json.dumps(report)); return 1

    def ask(msg):
        wire.send(noise.encrypt(jcs(msg)))
        try:
            return strict_json(noise.decrypt(wire.recv()))
        except (ConnectionError, OSError) as e:
            report.update(closedWithoutAnswer=True, error=str(e))
            return None

    code = 1
    if args.query_edge:
        answer = ask({"type": "query", "edge": args.query_edge})
        report["answer"] = answer
        if answer and answer.get("type") == "answer":
            ok = set(answer) == {"type", "edge", "held"} and answer["edge"] == args.query_edge and isinstance(answer["held"], bool)
            report["wellFormed"] = ok
            code = 0 if ok else 1
            if ok and peer and peer.get("edge") == args.query_edge:
                peer["confirmed" if answer["held"] else "withdrawn"] = True
                me.save()
    else:
        if not peer or not peer.get("mailboxToken"):
            raise SystemExit("--mail-text needs --state holding a route from an exchange")
        envelope = {"version": 1, "id": b64u(os.urandom(16)), "from": me.did, "to": args.expect_did, "sentAt": int(time.time()),
                    "text": args.mail_text}
        envelope["signature"] = b64(me.ed.sign(b"nearcard/message/v1\0" + jcs(envelope)).signature)
        deliver = {"type": "deliver", "mailboxToken": peer["mailboxToken"], "envelope": envelope}
        report["answer"] = ask(deliver)
        code = 0 if (report["answer"] or {}).get("type") == "ack" else 1
        if args.resend and code == 0:
            wire.close()
            wire, noise = ik_dial(host, port, me.x, responder)
            report["again"] = ask(deliver)
    wire.close()
    print(json.dumps(report))
    return code


if __name__ == "__main__":
    sys.exit(main())
