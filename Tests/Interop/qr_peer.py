#!/usr/bin/env python3
"""An independent QR peer for Nearcard's tests: it builds QR texts the way the iOS app does (from
the iOS app's published formats as docs/PROTOCOL.md §16 restates them, not from Nearcard's encoder) and checks Nearcard's
output the way any scanner could.

  qr_peer.py ios-plaintext [--expired]          an iOS plaintext envelope
  qr_peer.py ios-didsigned [--envelope] [--tamper]   an iOS-style BusinessCard VC-JWT (prints {text, did})
  qr_peer.py ios-zk                             an iOS zkProof envelope (encrypted for the sender's devices)
  qr_peer.py check-plaintext TEXT               checks a plaintext envelope against what the iOS app decodes
  qr_peer.py check-didsigned TEXT               checks header/claims layout and the signature (joserfc)
  qr_peer.py verify-zk TEXT                     verifies a Nearcard zkProof envelope from scratch
  qr_peer.py verify-vp TOKEN CLIENT_ID NONCE    verifies a VP token (joserfc) and its claims
  qr_peer.py sce1-encode TEXT | sce1-decode TEXT
  qr_peer.py segno TEXT OUT.png                 a QR image made by another generator
  qr_peer.py photo TEXT OUT.jpg                 a "phone photo" of a code: segno's code, rotated a little,
                                                on a grey page with noise, saved as JPEG by Pillow
"""
import base64
import hashlib
import json
import re
import sys
import time
import uuid
import zlib

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from joserfc import jws
from joserfc.jwk import ECKey

# Its checks are assert statements: with -O (or PYTHONOPTIMIZE) they would pass anything.
if not __debug__:
    raise SystemExit("qr_peer.py: run it without -O / PYTHONOPTIMIZE (its checks are asserts)")

B58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
ISO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")
UUID_UPPER = re.compile(r"^[0-9A-F]{8}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{12}$")


def b58(data):
    n = int.from_bytes(data, "big")
    out = ""
    while n:
        n, r = divmod(n, 58)
        out = B58[r] + out
    return "1" * (len(data) - len(data.lstrip(b"\0"))) + out


def unb58(s):
    n = 0
    for c in s:
        n = n * 58 + B58.index(c)
    return n.to_bytes((n.bit_length() + 7) // 8, "big")


def b64u(b): return base64.urlsafe_b64encode(b).rstrip(b"=").decode()
def b64ud(s): return base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))
def iso(t): return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))
def sorted_json(v): return json.dumps(v, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def did_of(pub):
    point = pub.public_bytes(Encoding.X962, PublicFormat.CompressedPoint)
    return "did:key:z" + b58(bytes([0x80, 0x24]) + point)


def jwk_of_did(did):
    raw = unb58(did.split("#")[0][len("did:key:z"):])
    assert raw[:2] == bytes([0x80, 0x24])
    pub = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), raw[2:])
    n = pub.public_numbers()
    return {"kty": "EC", "crv": "P-256", "x": b64u(n.x.to_bytes(32, "big")), "y": b64u(n.y.to_bytes(32, "big"))}


def snapshot():
    return {"cardId": str(uuid.uuid4()).upper(), "name": "Grace Hopper", "nameType": "display_name", "title": "Rear Admiral",
            "company": "US Navy", "emails": ["grace@navy.mil"], "phones": [], "skills": [{"name": "COBOL", "category": "Technology", "proficiency": "expert"}],
            "socialProfiles": [{"platform": "github", "username": "ghopper", "url": "https://github.com/ghopper"}], "categories": [],
            "updatedAt": iso(time.time())}


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    now = int(time.time())
    if cmd == "ios-plaintext":
        share = str(uuid.uuid4()).upper()
        exp = now - 3600 if "--expired" in args else now + 86400
        env = {"version": 2, "format": "plaintext", "sharingLevel": "professional", "selectedFields": ["name", "title", "company", "email"],
               "shareId": share, "plaintext": {"snapshot": snapshot(), "shareId": share, "createdAt": iso(now), "expirationDate": iso(exp),
                                               "selectedFields": ["name", "title", "company", "email"]}}
        print(sorted_json(env))
    elif cmd == "ios-didsigned":
        key = ECKey.generate_key("P-256")
        pem_pub = key.as_dict(private=False)
        pub = ec.EllipticCurvePublicNumbers(int.from_bytes(b64ud(pem_pub["x"]), "big"), int.from_bytes(b64ud(pem_pub["y"]), "big"), ec.SECP256R1()).public_key()
        did = did_of(pub)
        claims = {"jti": "urn:uuid:" + str(uuid.uuid4()).upper(), "iss": did, "sub": did, "nbf": now, "iat": now, "exp": now + 86400,
                  "vc": {"@context": ["https://www.w3.org/2018/credentials/v1", "https://schema.org"], "type": ["VerifiableCredential", "BusinessCardCredential"],
                         "credentialSubject": {"id": did, "name": "Grace Hopper", "title": "Rear Admiral", "company": "US Navy",
                                               "email": "grace@navy.mil"}}}
        header = {"alg": "ES256", "cty": "application/vc+jwt", "kid": did + "#keys-1", "typ": "JWT"}
        token = jws.serialize_compact(header, sorted_json(claims).encode(), key, algorithms=["ES256"])
        if "--tamper" in args:
            h, p, s = token.split(".")
            c = json.loads(b64ud(p))
            c["vc"]["credentialSubject"]["title"] = "Admiral of the Fleet"
            token = h + "." + b64u(sorted_json(c).encode()) + "." + s
        text = token
        if "--envelope" in args:
            share = str(uuid.uuid4()).upper()
            text = sorted_json({"version": 2, "format": "didSigned", "sharingLevel": "professional", "shareId": share,
                                "didSigned": {"jwt": token, "shareId": share, "createdAt": iso(now), "issuerDid": did, "holderDid": did}})
        print(json.dumps({"text": text, "did": did}))
    elif cmd == "ios-zk":
        import os
        blob = os.urandom(12) + os.urandom(300) + os.urandom(16)
        print(sorted_json({"version": 2, "format": "zkProof", "sharingLevel": "professional", "shareId": str(uuid.uuid4()).upper(),
                           "encryptedPayload": base64.b64encode(blob).decode()}))
    elif cmd == "check-plaintext":
        text = args[0]
        env = json.loads(text)
        assert text == sorted_json(env), "keys must be sorted, compact"
        assert env["version"] == 2 and env["format"] == "plaintext" and UUID_UPPER.match(env["shareId"]), env
        p = env["plaintext"]
        assert ISO.match(p["createdAt"]) and ISO.match(p.get("expirationDate", iso(0))), p
        s = p["snapshot"]
        for k in ["emails", "phones", "skills", "socialProfiles", "categories", "updatedAt"]:
            assert k in s, f"the iOS app requires snapshot.{k}"
        assert UUID_UPPER.match(s["cardId"]) and ISO.match(s["updatedAt"]) and s["nameType"] in ("display_name", "verified_legal_name")
        for sk in s["skills"]:
            assert set(sk) == {"name", "category", "proficiency"}, sk
        print(json.dumps({"ok": True, "name": s["name"], "fields": env.get("selectedFields")}))
    elif cmd == "check-didsigned":
        token = args[0]
        h, p, _ = token.split(".")
        header, claims = json.loads(b64ud(h)), json.loads(b64ud(p))
        assert header == {"alg": "ES256", "cty": "application/vc+jwt", "kid": claims["iss"] + "#keys-1", "typ": "JWT"}, header
        assert claims["iss"] == claims["sub"] and claims["jti"].startswith("urn:uuid:") and UUID_UPPER.match(claims["jti"][9:])
        vc = claims["vc"]
        assert vc["@context"] == ["https://www.w3.org/2018/credentials/v1", "https://schema.org"]
        assert vc["type"] == ["VerifiableCredential", "BusinessCardCredential"] and vc["credentialSubject"]["id"] == claims["iss"]
        obj = jws.deserialize_compact(token, ECKey.import_key(jwk_of_did(claims["iss"])), algorithms=["ES256"])
        print(json.dumps({"ok": True, "subject": json.loads(obj.payload)["vc"]["credentialSubject"]}))
    elif cmd == "verify-zk":
        env = json.loads(args[0])
        proof = env["sdProof"]
        parts = proof["sdJwt"].split("~")
        jwt = parts[0]
        h, p, s = jwt.split(".")
        claims = json.loads(b64ud(p))
        raw = b64ud(s)
        key = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), unb58(claims["iss"][len("did:key:z"):])[2:])
        key.verify(encode_dss_signature(int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big")), (h + "." + p).encode(), ec.ECDSA(hashes.SHA256()))
        assert claims["jti"] == "urn:uuid:" + env["shareId"] and claims["exp"] > now, claims
        assert claims["_sd_alg"] == "sha-256" and len(claims["_sd"]) == 7
        fields = {}
        for d in parts[1:-1]:
            assert b64u(hashlib.sha256(d.encode()).digest()) in claims["_sd"], "undisclosed digest"
            _salt, name, value = json.loads(b64ud(d))
            fields[name] = value
        assert set(env["selectedFields"]) <= set(fields), "a claimed field is not disclosed"
        print(json.dumps({"ok": True, "holder": claims["iss"], "fields": fields, "hidden": 7 - len(fields)}))
    elif cmd == "verify-vp":
        token, client_id, nonce = args
        h, p, _ = token.split(".")
        header, claims = json.loads(b64ud(h)), json.loads(b64ud(p))
        assert header["typ"] == "vp+jwt" and header["alg"] == "ES256" and header["kid"].startswith(claims["iss"] + "#")
        jws.deserialize_compact(token, ECKey.import_key(jwk_of_did(claims["iss"])), algorithms=["ES256"])
        assert claims["nonce"] == nonce and claims["aud"] == client_id and now <= claims["exp"] <= now + 310, claims
        vc = claims["vp"]["verifiableCredential"][0]
        vc_claims = json.loads(b64ud(vc.split(".")[1]))
        jws.deserialize_compact(vc, ECKey.import_key(jwk_of_did(vc_claims["iss"])), algorithms=["ES256"])
        print(json.dumps({"ok": True, "did": claims["iss"], "subject": vc_claims["vc"]["credentialSubject"]}))
    elif cmd == "sce1-encode":
        c = zlib.compressobj(9, zlib.DEFLATED, -15)
        print("sce1:" + b64u(c.compress(args[0].encode()) + c.flush()))
    elif cmd == "sce1-decode":
        print(zlib.decompress(b64ud(args[0][5:]), -15).decode())
    elif cmd == "segno":
        import segno
        segno.make(args[0], error="m", micro=False).save(args[1], scale=6, border=4)
    elif cmd == "photo":
        import io
        import random
        import segno
        from PIL import Image, ImageFilter
        buf = io.BytesIO()
        segno.make(args[0], error="m", micro=False).save(buf, kind="png", scale=8, border=4)
        code = Image.open(io.BytesIO(buf.getvalue())).convert("RGB").rotate(4, expand=True, fillcolor=(255, 255, 255))
        page = Image.new("RGB", (code.width + 240, code.height + 180), (182, 176, 168))
        page.paste(code, (130, 70))
        rng = random.Random(7)
        px = page.load()
        for _ in range(page.width * page.height // 40):
            x, y = rng.randrange(page.width), rng.randrange(page.height)
            r, g, b = px[x, y]
            d = rng.randint(-40, 40)
            px[x, y] = (max(0, min(255, r + d)), max(0, min(255, g + d)), max(0, min(255, b + d)))
        page.filter(ImageFilter.GaussianBlur(0.8)).save(args[1], "JPEG", quality=80)
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
