#!/usr/bin/env python3
"""An independent JOSE peer (joserfc) for Nearcard's interop tests.

  jose_peer.py sign ES256|EdDSA [--kid-did] CLAIMS_JSON
      Makes a fresh key, signs CLAIMS_JSON, prints {"token", "jwk", "did"}.
      With --kid-did the header's kid is the key's did:key URL (<did>#<multibase>).
  jose_peer.py verify TOKEN JWK_JSON
      Verifies TOKEN with the public JWK; prints the claims and exits 0, or exits 1.
"""
import json
import sys

from joserfc import jws
from joserfc.jwk import ECKey, OKPKey

B58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"


def b58encode(data: bytes) -> str:
    n = int.from_bytes(data, "big")
    out = ""
    while n:
        n, r = divmod(n, 58)
        out = B58[r] + out
    return "1" * (len(data) - len(data.lstrip(b"\0"))) + out


def b64u_decode(s: str) -> bytes:
    import base64
    return base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))


def did_key(jwk: dict) -> str:
    if jwk["kty"] == "EC":
        x, y = b64u_decode(jwk["x"]), b64u_decode(jwk["y"])
        raw = bytes([2 + (y[-1] & 1)]) + x
        prefix = bytes([0x80, 0x24])
    else:
        raw = b64u_decode(jwk["x"])
        prefix = bytes([0xED, 0x01])
    return "did:key:z" + b58encode(prefix + raw)


def main() -> int:
    cmd = sys.argv[1]
    if cmd == "sign":
        alg = sys.argv[2]
        kid_did = "--kid-did" in sys.argv
        claims = json.loads(sys.argv[-1])
        key = ECKey.generate_key("P-256") if alg == "ES256" else OKPKey.generate_key("Ed25519")
        public = key.as_dict(private=False)
        did = did_key(public)
        header = {"alg": alg, "typ": "JWT"}
        if kid_did:
            header["kid"] = did + "#" + did[len("did:key:"):]
        token = jws.serialize_compact(header, json.dumps(claims).encode(), key, algorithms=[alg])
        print(json.dumps({"token": token, "jwk": public, "did": did}))
        return 0
    if cmd == "verify":
        token, jwk = sys.argv[2], json.loads(sys.argv[3])
        key = ECKey.import_key(jwk) if jwk["kty"] == "EC" else OKPKey.import_key(jwk)
        try:
            obj = jws.deserialize_compact(token, key, algorithms=["ES256", "EdDSA"])
        except Exception as e:  # noqa: BLE001 - any failure is "not valid" for the test
            print(f"invalid: {e}", file=sys.stderr)
            return 1
        print(obj.payload.decode())
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
