#!/usr/bin/env python3
"""Private common contacts (docs/PROTOCOL.md §22), written from the spec and RFC 9496 alone.

Pure Python, standard library only: ristretto255 (RFC 9496 §4: decoding, encoding, the element
derivation used for hash-to-group) on Python integers, so nothing here shares code with libsodium,
which Nearcard uses. Slow (a few milliseconds a multiplication) and NOT constant-time: a test peer,
never a product.

Import it from a Python peer:

    import psi
    s = psi.Session("initiator", my_dids)          # or "responder"; fresh secret scalar
    out = s.start()                                 # initiator: [psi-1 message dict]
    out = s.handle(message_dict)                    # -> list of message dicts to send
    s.result                                        # None until over, then {"common": set, "peerSetBound": int}

`handle` raises PSIError(code, reason) with code "protocol_error" or "too_large" (§13) for a message
the spec says to refuse.

Command line:
    psi.py --self-test        RFC 9496 vectors, then runs of the protocol between two Sessions
    psi.py --vectors FILE     writes the known-answer vectors of §22.5 (fixed DIDs and scalars)
    psi.py --peer ROLE        one side over JSON lines: first line in is {"mine": [DIDs]} (optionally
                              "scalar": hex), then PSI messages in and out, one JCS object per line; the
                              last line out is {"type": "result", "common": [sorted DIDs], "peerSetBound": n}
                              or {"type": "error", "code", "reason"}.
"""
import base64
import hashlib
import json
import secrets
import sys

# Its checks are assert statements: with -O (or PYTHONOPTIMIZE) they would pass anything.
if not __debug__:
    raise SystemExit("psi.py: run it without -O / PYTHONOPTIMIZE (its checks are asserts)")

# --- ristretto255 (RFC 9496) -------------------------------------------------------------------

P = 2**255 - 19
L = 2**252 + 27742317777372353535851937790883648493  # the group order, ℓ
D = (-121665 * pow(121666, P - 2, P)) % P
SQRT_M1 = 19681161376707505956807079304988542015446066515923890162744021073123829784752
SQRT_AD_MINUS_ONE = 25063068953384623474111414158702152701244531502492656460079210482610430750235
INVSQRT_A_MINUS_D = 54469307008909316920995813868745141605393597292927456921205312896311721017578
ONE_MINUS_D_SQ = 1159843021668779879193775521855586647937357759715417654439879720876111806838
D_MINUS_ONE_SQ = 40440834346308536858101042469323190826248399146238708352240133220865137265952


def _is_negative(x):
    return (x % P) & 1


def _abs(x):
    x %= P
    return P - x if _is_negative(x) else x


def _sqrt_ratio_m1(u, v):
    """RFC 9496 §4.2: (was_square, the non-negative square root of u/v or of SQRT_M1·u/v)."""
    u %= P
    v %= P
    v3 = v * v % P * v % P
    v7 = v3 * v3 % P * v % P
    r = u * v3 % P * pow(u * v7 % P, (P - 5) // 8, P) % P
    check = v * r % P * r % P
    correct = check == u
    flipped = check == (-u) % P
    flipped_i = check == (-u) * SQRT_M1 % P
    if flipped or flipped_i:
        r = r * SQRT_M1 % P
    return (correct or flipped), _abs(r)


# Points are extended coordinates (X, Y, Z, T) on edwards25519, a = -1.
IDENTITY = (0, 1, 1, 0)


def _add(p, q):
    x1, y1, z1, t1 = p
    x2, y2, z2, t2 = q
    a = (y1 - x1) * (y2 - x2) % P
    b = (y1 + x1) * (y2 + x2) % P
    c = t1 * 2 * D % P * t2 % P
    d = z1 * 2 * z2 % P
    e, f, g, h = b - a, d - c, d + c, b + a
    return (e * f % P, g * h % P, f * g % P, e * h % P)


def _mul(k, p):
    q = IDENTITY
    while k:
        if k & 1:
            q = _add(q, p)
        p = _add(p, p)
        k >>= 1
    return q


def decode(b):
    """RFC 9496 §4.3.1; None for an invalid encoding."""
    if len(b) != 32:
        return None
    s = int.from_bytes(b, "little")
    if s >= P or _is_negative(s):
        return None
    ss = s * s % P
    u1 = (1 - ss) % P
    u2 = (1 + ss) % P
    u2_sqr = u2 * u2 % P
    v = (-(D * u1 % P * u1) - u2_sqr) % P
    was_square, invsqrt = _sqrt_ratio_m1(1, v * u2_sqr)
    den_x = invsqrt * u2 % P
    den_y = invsqrt * den_x % P * v % P
    x = _abs(2 * s * den_x)
    y = u1 * den_y % P
    t = x * y % P
    if not was_square or _is_negative(t) or y == 0:
        return None
    return (x, y, 1, t)


def encode(p):
    """RFC 9496 §4.3.2."""
    x0, y0, z0, t0 = p
    u1 = (z0 + y0) * (z0 - y0) % P
    u2 = x0 * y0 % P
    _, invsqrt = _sqrt_ratio_m1(1, u1 * u2 % P * u2)
    den1 = invsqrt * u1 % P
    den2 = invsqrt * u2 % P
    z_inv = den1 * den2 % P * t0 % P
    if _is_negative(t0 * z_inv):
        x, y, den_inv = y0 * SQRT_M1 % P, x0 * SQRT_M1 % P, den1 * INVSQRT_A_MINUS_D % P
    else:
        x, y, den_inv = x0, y0, den2
    if _is_negative(x * z_inv):
        y = (-y) % P
    s = _abs(den_inv * (z0 - y))
    return s.to_bytes(32, "little")


def _map(b):
    """RFC 9496 §4.3.4 MAP: 32 bytes (top bit masked) to a point."""
    t = (int.from_bytes(b, "little") & ((1 << 255) - 1)) % P
    r = SQRT_M1 * t % P * t % P
    u = (r + 1) * ONE_MINUS_D_SQ % P
    v = (-1 - r * D) * (r + D) % P
    was_square, s = _sqrt_ratio_m1(u, v)
    if not was_square:
        s = (-_abs(s * t)) % P
        c = r
    else:
        c = P - 1
    n = (c * (r - 1) % P * D_MINUS_ONE_SQ - v) % P
    w0 = 2 * s * v % P
    w1 = n * SQRT_AD_MINUS_ONE % P
    w2 = (1 - s * s) % P
    w3 = (1 + s * s) % P
    return (w0 * w3 % P, w2 * w1 % P, w1 * w3 % P, w0 * w2 % P)


def from_hash(h):
    """Hash-to-group (RFC 9496 §4.3.4): 64 bytes to an element's encoding."""
    assert len(h) == 64
    return encode(_add(_map(h[:32]), _map(h[32:])))


def scalarmult(k, point_bytes):
    """k · point, both encodings; None when the point is invalid or the product is the identity."""
    p = decode(point_bytes)
    if p is None:
        return None
    out = encode(_mul(int.from_bytes(k, "little"), p))
    return None if out == bytes(32) else out


def is_valid(point_bytes):
    """§22.2: a valid encoding (RFC 9496 §4.3.1) that is not the identity."""
    return decode(point_bytes) is not None and point_bytes != bytes(32)


# --- §22 ---------------------------------------------------------------------------------------

DOMAIN = b"nearcard/psi/v2"
MAXIMUM_SET_SIZE = 1000
BUCKETS = [8, 16, 32, 64, 128, 256, 512, 1000]


def element(did):
    """§22.1: H(did) = from_hash(SHA-512("nearcard/psi/v2" ‖ 0x00 ‖ UTF-8(did)))."""
    return from_hash(hashlib.sha512(DOMAIN + b"\x00" + did.encode("utf-8")).digest())


def padded_count(n):
    return next((b for b in BUCKETS if b >= n), None)


def random_scalar():
    while True:
        k = int.from_bytes(secrets.token_bytes(64), "little") % L
        if k:
            return k.to_bytes(32, "little")


def random_element():
    return from_hash(secrets.token_bytes(64))


def b64u(b):
    return base64.urlsafe_b64encode(b).rstrip(b"=").decode()


def unb64u(s):
    if not isinstance(s, str) or len(s) != 43:
        return None
    try:
        b = base64.urlsafe_b64decode(s + "=")
    except Exception:
        return None
    return b if b64u(b) == s else None  # canonical only (§1)


def jcs(obj):
    """These messages are ASCII objects of strings and lists: sorted keys, no whitespace is their JCS."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


class PSIError(Exception):
    def __init__(self, code, reason):
        super().__init__(f"{code}: {reason}")
        self.code, self.reason = code, reason


MEMBER = {"psi-1": "blinded", "psi-2": "doubled", "psi-3": "blinded", "psi-4": "doubled"}


def decode_message(msg):
    """§22.2: the list of points of a PSI message (a dict), checked element by element."""
    t = msg.get("type")
    if t not in MEMBER:
        raise PSIError("protocol_error", f"unknown message type {t!r}")
    member = MEMBER[t]
    if set(msg) != {"type", member}:
        raise PSIError("protocol_error", f"{t}: members must be type and {member}")
    lst = msg[member]
    if not isinstance(lst, list):
        raise PSIError("protocol_error", f"{t}: {member} is not a list")
    if len(lst) > MAXIMUM_SET_SIZE:
        raise PSIError("too_large", f"{t}: {member} has {len(lst)} entries; at most {MAXIMUM_SET_SIZE}")
    points = []
    for i, s in enumerate(lst):
        b = unb64u(s)
        if b is None or not is_valid(b):
            raise PSIError("protocol_error", f"{t}: {member}[{i}] is not a ristretto255 element")
        points.append(b)
    if len(set(points)) != len(points):
        raise PSIError("protocol_error", f"{t}: {member} repeats an element")
    return t, points


class Session:
    """One side of one run (§22.2). role: "initiator" or "responder"; scalar: 32 bytes little-endian
    (fresh random when None); shuffle/dummy: replaceable for repeatable tests."""

    def __init__(self, role, mine, scalar=None, shuffle=None, dummy=None):
        assert role in ("initiator", "responder")
        mine = list(dict.fromkeys(mine))
        assert len(mine) <= MAXIMUM_SET_SIZE, "the caller picks at most 1,000 DIDs (§22.3)"
        self.role, self.mine = role, mine
        self.scalar = scalar if scalar is not None else random_scalar()
        self.shuffle = shuffle or (lambda lst: secrets.SystemRandom().shuffle(lst))
        self.dummy = dummy or random_element
        self.state = "ready"
        self.result = None

    def _blind(self):
        entries = [(did, scalarmult(self.scalar, element(did))) for did in self.mine]
        while len(entries) < padded_count(len(self.mine)):
            entries.append((None, self.dummy()))
        self.shuffle(entries)
        return [d for d, _ in entries], [p for _, p in entries]

    def _double(self, points):
        return [scalarmult(self.scalar, p) for p in points]

    def start(self):
        assert self.role == "initiator" and self.state == "ready"
        self.order, blinded = self._blind()
        self.state = "sent-blinded"
        return [{"type": "psi-1", "blinded": [b64u(p) for p in blinded]}]

    def handle(self, msg):
        t, points = decode_message(msg)
        expected = {("responder", "ready"): "psi-1", ("initiator", "sent-blinded"): "psi-2",
                    ("initiator", "received-doubled"): "psi-3", ("responder", "answered"): "psi-4"}
        want = expected.get((self.role, self.state))
        if t != want:
            self.state = "failed"
            raise PSIError("protocol_error", f"{t} does not belong here (expected {want or 'nothing more'})")
        if t in ("psi-1", "psi-3") and len(points) not in BUCKETS:
            self.state = "failed"
            raise PSIError("protocol_error", f"{t}: {len(points)} entries is not a bucket size")
        if t in ("psi-2", "psi-4") and len(points) != len(self.order):
            self.state = "failed"
            raise PSIError("protocol_error", f"{t}: {len(points)} doubled values for the {len(self.order)} we sent")
        if t == "psi-1":
            doubled = self._double(points)
            self.theirs_doubled, self.peer_bound = set(doubled), len(points)
            self.order, ours = self._blind()
            self.state = "answered"
            return [{"type": "psi-2", "doubled": [b64u(p) for p in doubled]},
                    {"type": "psi-3", "blinded": [b64u(p) for p in ours]}]
        if t == "psi-2":
            self.mine_doubled = {p: did for did, p in zip(self.order, points) if did is not None}
            self.state = "received-doubled"
            return []
        if t == "psi-3":
            doubled = self._double(points)
            common = {self.mine_doubled[p] for p in doubled if p in self.mine_doubled}
            self.result = {"common": common, "peerSetBound": len(points)}
            self.state = "finished"
            return [{"type": "psi-4", "doubled": [b64u(p) for p in doubled]}]
        common = {did for did, p in zip(self.order, points) if did is not None and p in self.theirs_doubled}
        self.result = {"common": common, "peerSetBound": self.peer_bound}
        self.state = "finished"
        return []


def run(x, y):
    """Both sides in lockstep; returns (initiator's result, responder's result)."""
    a, b = Session("initiator", x), Session("responder", y)
    to_b = a.start()
    while to_b or not (a.result and b.result):
        to_a = [m for msg in to_b for m in b.handle(json.loads(jcs(msg)))]
        to_b = [m for msg in to_a for m in a.handle(json.loads(jcs(msg)))]
    return a.result, b.result


# --- RFC 9496 Appendix A vectors and the self-test ---------------------------------------------

RFC_MULTIPLES = [  # A.1: [0]B .. [15]B
    "0000000000000000000000000000000000000000000000000000000000000000",
    "e2f2ae0a6abc4e71a884a961c500515f58e30b6aa582dd8db6a65945e08d2d76",
    "6a493210f7499cd17fecb510ae0cea23a110e8d5b901f8acadd3095c73a3b919",
    "94741f5d5d52755ece4f23f044ee27d5d1ea1e2bd196b462166b16152a9d0259",
    "da80862773358b466ffadfe0b3293ab3d9fd53c5ea6c955358f568322daf6a57",
    "e882b131016b52c1d3337080187cf768423efccbb517bb495ab812c4160ff44e",
    "f64746d3c92b13050ed8d80236a7f0007c3b3f962f5ba793d19a601ebb1df403",
    "44f53520926ec81fbd5a387845beb7df85a96a24ece18738bdcfa6a7822a176d",
    "903293d8f2287ebe10e2374dc1a53e0bc887e592699f02d077d5263cdd55601c",
    "02622ace8f7303a31cafc63f8fc48fdc16e1c8c8d234b2f0d6685282a9076031",
    "20706fd788b2720a1ed2a5dad4952b01f413bcf0e7564de8cdc816689e2db95f",
    "bce83f8ba5dd2fa572864c24ba1810f9522bc6004afe95877ac73241cafdab42",
    "e4549ee16b9aa03099ca208c67adafcafa4c3f3e4e5303de6026e3ca8ff84460",
    "aa52e000df2e16f55fb1032fc33bc42742dad6bd5a8fc0be0167436c5948501f",
    "46376b80f409b29dc2b5f6f0c52591990896e5716f41477cd30085ab7f10301e",
    "e0c418f7c8d9c4cdd7395b93ea124f3ad99021bb681dfc3302a9d99a2e53e64e",
]
RFC_INVALID = [  # A.2: non-canonical, negative, non-square x², negative xy, s = -1
    "00ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
    "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
    "f3ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
    "edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
    "0100000000000000000000000000000000000000000000000000000000000000",
    "01ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
    "ed57ffd8c914fb201471d1c3d245ce3c746fcbe63a3679d51b6a516ebebe0e20",
    "c34c4e1826e5d403b78e246e88aa051c36ccf0aafebffe137d148a2bf9104562",
    "c940e5a4404157cfb1628b108db051a8d439e1a421394ec4ebccb9ec92a8ac78",
    "47cfc5497c53dc8e61c91d17fd626ffb1c49e2bca94eed052281b510b1117a24",
    "f1c6165d33367351b0da8f6e4511010c68174a03b6581212c71c0e1d026c3c72",
    "87260f7a2f12495118360f02c26a470f450dadf34a413d21042b43b9d93e1309",
    "26948d35ca62e643e26a83177332e6b6afeb9d08e4268b650f1f5bbd8d81d371",
    "4eac077a713c57b4f4397629a4145982c661f48044dd3f96427d40b147d9742f",
    "de6a7b00deadc788eb6b6c8d20c0ae96c2f2019078fa604fee5b87d6e989ad7b",
    "bcab477be20861e01e4a0e295284146a510150d9817763caf1a6f4b422d67042",
    "2a292df7e32cababbd9de088d1d1abec9fc0440f637ed2fba145094dc14bea08",
    "f4a9e534fc0d216c44b218fa0c42d99635a0127ee2e53c712f70609649fdff22",
    "8268436f8c4126196cf64b3c7ddbda90746a378625f9813dd9b8457077256731",
    "2810e5cbc2cc4d4eece54f61c6f69758e289aa7ab440b3cbeaa21995c2f4232b",
    "3eb858e78f5a7254d8c9731174a94f76755fd3941c0ac93735c07ba14579630e",
    "a45fdc55c76448c049a1ab33f17023edfb2be3581e9c7aade8a6125215e04220",
    "d483fe813c6ba647ebbfd3ec41adca1c6130c2beeee9d9bf065c8d151c5f396e",
    "8a2e1d30050198c65a54483123960ccc38aef6848e1ec8f5f780e8523769ba32",
    "32888462f8b486c68ad7dd9610be5192bbeaf3b443951ac1a8118419d9fa097b",
    "227142501b9d4355ccba290404bde41575b037693cef1f438c47f8fbf35d1165",
    "5c37cc491da847cfeb9281d407efc41e15144c876e0170b499a96a22ed31e01e",
    "445425117cb8c90edcbc7c1cc0e74f747f2c1efa5630a967c64f287792a48a4b",
    "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
]
RFC_HASH = [  # A.3: from_hash(SHA-512(label))
    ("Ristretto is traditionally a short shot of espresso coffee",
     "3066f82a1a747d45120d1740f14358531a8f04bbffe6a819f86dfe50f44a0a46"),
    ("made with the normal amount of ground coffee but extracted with",
     "f26e5b6f7d362d2d2a94c5d0e7602cb4773c95a2e5c31a64f133189fa76ed61b"),
    ("about half the amount of water in the same amount of time",
     "006ccd2a9e6867e6a2c5cea83d3302cc9de128dd2a9a57dd8ee7b9d7ffe02826"),
    ("by using a finer grind.",
     "f8f0c87cf237953c5890aec3998169005dae3eca1fbb04548c635953c817f92a"),
    ("This produces a concentrated shot of coffee per volume.",
     "ae81e7dedf20a497e10c304a765c1767a42d6e06029758d2d7e8ef7cc4c41179"),
    ("Just pulling a normal shot short will produce a weaker shot",
     "e2705652ff9f5e44d3e841bf1c251cf7dddb77d140870d1ab2ed64f1a9ce8628"),
    ("and is not a Ristretto as some believe.",
     "80bd07262511cdde4863f8a7434cef696750681cb9510eea557088f76d9e5065"),
]

# §22.5: fixed inputs of the known-answer vectors (Tests/Vectors/psi/psi-v2.json); the did:key DIDs
# are from Tests/Vectors/didkey (any string is a valid input: H hashes bytes).
VECTOR_DIDS_A = [
    "did:key:zDnaerDaTF5BXEavCrfRZEk316dpbLsfPDZ3WJ5hRTPFU2169",  # in both sets
    "did:key:zDnaeTiq1PdzvZXUaMdezchcMJQpBdH2VN4pgrrEhMCCbmwSb",  # in both sets
    "did:key:zDnaerx9CtbPJ1q36T5Ln5wYt3MQYeGRG5ehnPAmxcf5mDZpv",  # only A's
]
VECTOR_DIDS_B = [
    "did:key:zDnaeTiq1PdzvZXUaMdezchcMJQpBdH2VN4pgrrEhMCCbmwSb",
    "did:key:zDnaerDaTF5BXEavCrfRZEk316dpbLsfPDZ3WJ5hRTPFU2169",
    "did:web:example.com",                                         # only B's
    "did:key:z6MkiTBz1ymuepAQ4HEHYSF1H8quG5GLVVQR3djdX3mDooWp",  # only B's
]
# Scalars: SHA-512 of a label, reduced mod ℓ (so anyone can rebuild them), little-endian.
VECTOR_SCALAR_A = (int.from_bytes(hashlib.sha512(b"nearcard psi vector scalar a").digest(), "little") % L).to_bytes(32, "little")
VECTOR_SCALAR_B = (int.from_bytes(hashlib.sha512(b"nearcard psi vector scalar b").digest(), "little") % L).to_bytes(32, "little")


def vectors():
    def side(dids, k):
        return [{"did": d, "element": element(d).hex(), "blinded": scalarmult(k, element(d)).hex()} for d in dids]
    a, b = side(VECTOR_DIDS_A, VECTOR_SCALAR_A), side(VECTOR_DIDS_B, VECTOR_SCALAR_B)
    for e in a:
        e["doubled"] = scalarmult(VECTOR_SCALAR_B, bytes.fromhex(e["blinded"])).hex()
    for e in b:
        e["doubled"] = scalarmult(VECTOR_SCALAR_A, bytes.fromhex(e["blinded"])).hex()
    common = sorted(set(VECTOR_DIDS_A) & set(VECTOR_DIDS_B))

    # A whole run with the randomness fixed: no shuffle (own DIDs in order, then the padding), and
    # padding element i of side S = from_hash(SHA-512("nearcard psi vector dummy S" ‖ byte i)).
    def dummies(side):
        counter = iter(range(256))
        return lambda: from_hash(hashlib.sha512(b"nearcard psi vector dummy " + side + bytes([next(counter)])).digest())
    ia = Session("initiator", VECTOR_DIDS_A, VECTOR_SCALAR_A, shuffle=lambda l: None, dummy=dummies(b"A"))
    rb = Session("responder", VECTOR_DIDS_B, VECTOR_SCALAR_B, shuffle=lambda l: None, dummy=dummies(b"B"))
    transcript = ia.start()
    transcript += rb.handle(transcript[0])
    assert ia.handle(transcript[1]) == []
    transcript += ia.handle(transcript[2])
    assert rb.handle(transcript[3]) == []
    assert sorted(ia.result["common"]) == common and sorted(rb.result["common"]) == common
    return {
        "description": "docs/PROTOCOL.md §22.5: H(did) = ristretto255_from_hash(SHA-512(\"nearcard/psi/v2\" ‖ 0x00 ‖ did)); "
                       "blinded = H(did)·own scalar; doubled = blinded·the other's scalar; transcript: psi-1..psi-4 of a run "
                       "with no shuffle and padding element i of side S = from_hash(SHA-512(\"nearcard psi vector dummy S\" ‖ byte i)). Computed by Tests/Interop/psi.py "
                       "(pure Python from RFC 9496, checked against its Appendix A), not by libsodium.",
        "scalarA": VECTOR_SCALAR_A.hex(),
        "scalarB": VECTOR_SCALAR_B.hex(),
        "initiator": a,
        "responder": b,
        "common": common,
        "transcript": [jcs(m) for m in transcript],
        "rfc9496": {"multiples": RFC_MULTIPLES, "invalid": RFC_INVALID,
                    "hashToGroup": [{"label": l, "input": hashlib.sha512(l.encode()).hexdigest(), "output": o}
                                    for l, o in RFC_HASH]},
    }


def self_test():
    base = decode(bytes.fromhex(RFC_MULTIPLES[1]))
    for k, want in enumerate(RFC_MULTIPLES):
        assert encode(_mul(k, base)).hex() == want, f"[{k}]B"
        if k:
            assert encode(decode(bytes.fromhex(want))).hex() == want
    for bad in RFC_INVALID:
        assert decode(bytes.fromhex(bad)) is None, bad
    for label, want in RFC_HASH:
        assert from_hash(hashlib.sha512(label.encode()).digest()).hex() == want, label
    assert not is_valid(bytes(32))
    k = random_scalar()
    assert decode(scalarmult(k, bytes.fromhex(RFC_MULTIPLES[3]))) is not None
    print("rfc9496: ok")

    pool = [f"did:key:zDnaeSelfTest{i:04d}" for i in range(40)]
    for name, x, y in [("no overlap", pool[:5], pool[5:12]), ("some", pool[:10], pool[6:20]),
                       ("all", pool[:9], pool[:9]), ("initiator empty", [], pool[:3]),
                       ("responder empty", pool[:3], []), ("both empty", [], [])]:
        ra, rb = run(x, y)
        want = set(x) & set(y)
        assert ra["common"] == want and rb["common"] == want, name
        assert ra["peerSetBound"] == padded_count(len(y)) and rb["peerSetBound"] == padded_count(len(x)), name
        print(f"run ({name}): ok, {len(want)} in common")

    # Refusals (§22.2).
    s = Session("responder", pool[:2])
    for msg, code in [({"type": "psi-1", "blinded": ["not base64url!"] * 8}, "protocol_error"),
                      ({"type": "psi-1", "blinded": [b64u(bytes(32))] * 8}, "protocol_error"),
                      ({"type": "psi-1", "blinded": [b64u(bytes.fromhex(RFC_MULTIPLES[2]))] * 8}, "protocol_error"),
                      ({"type": "psi-1", "blinded": [b64u(random_element()) for _ in range(7)]}, "protocol_error"),
                      ({"type": "psi-1", "blinded": ["x"] * 1001}, "too_large"),
                      ({"type": "psi-1", "blinded": [b64u(bytes.fromhex(RFC_INVALID[6]))] * 8}, "protocol_error")]:
        try:
            Session("responder", pool[:2]).handle(msg)
            raise AssertionError(f"accepted {str(msg)[:60]}")
        except PSIError as e:
            assert e.code == code, (e.code, code)
    a = Session("initiator", pool[:3])
    first = a.start()
    second = s.handle(first[0])
    short = {"type": "psi-2", "doubled": second[0]["doubled"][:-1]}
    try:
        a.handle(short)
        raise AssertionError("accepted a short psi-2")
    except PSIError as e:
        assert e.code == "protocol_error"
    print("refusals: ok")


def peer(role):
    """One side over JSON lines on stdin/stdout (the Swift cross-check drives it)."""
    def send(obj):
        sys.stdout.write(jcs(obj) + "\n")
        sys.stdout.flush()
    config = json.loads(sys.stdin.readline())
    scalar = bytes.fromhex(config["scalar"]) if "scalar" in config else None
    s = Session(role, config["mine"], scalar=scalar)
    try:
        if role == "initiator":
            for m in s.start():
                send(m)
        while s.result is None:
            line = sys.stdin.readline()
            if not line:
                send({"type": "error", "code": "connection_lost", "reason": "stdin closed before the run ended"})
                return 1
            for m in s.handle(json.loads(line)):
                send(m)
    except PSIError as e:
        send({"type": "error", "code": e.code, "reason": e.reason})
        return 1
    send({"type": "result", "common": sorted(s.result["common"]), "peerSetBound": s.result["peerSetBound"]})
    return 0


def main(argv):
    if argv[:1] == ["--self-test"]:
        self_test()
        return 0
    if argv[:1] == ["--vectors"] and len(argv) == 2:
        with open(argv[1], "w") as f:
            json.dump(vectors(), f, indent=2, ensure_ascii=False)
            f.write("\n")
        return 0
    if argv[:1] == ["--peer"] and len(argv) == 2 and argv[1] in ("initiator", "responder"):
        return peer(argv[1])
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
