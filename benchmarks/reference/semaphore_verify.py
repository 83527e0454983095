#!/usr/bin/env python3
"""Reference Groth16 verifiers for the Semaphore benchmark (benchmarks/, group "semaphore").

Verifies the same depth-10 Semaphore v4 proof Nearcard verifies, with:
  * groth16py (arkworks, Rust) — its prepared Verifier over the snarkjs JSON, parsing included;
  * py_ecc (pure Python) — the Groth16 equation e(A,B) = e(α,β)·e(vk_x,γ)·e(C,δ) written here on
    py_ecc.optimized_bn128 (three Miller loops with negated G1 inputs, one final exponentiation).
Prints {"arkworks_ms": [...], "py_ecc_ms": [...]} — every timing, so the caller takes medians.
"""
import argparse
import json
import time

import groth16py
from py_ecc import optimized_bn128 as bn

ap = argparse.ArgumentParser()
ap.add_argument("vector")
ap.add_argument("--arkworks-rounds", type=int, default=31)
ap.add_argument("--py-ecc-rounds", type=int, default=3)
args = ap.parse_args()

v = json.load(open(args.vector))
vk, proof, public = v["vk_depth10"], v["proof_snarkjs"], [int(x) for x in v["publicSignals"]]


def timed(rounds, f):
    out = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        ok = f()
        out.append((time.perf_counter() - t0) * 1e3)
        assert ok, "the reference verifier rejected the proof"
    return out


# arkworks
verifier = groth16py.Verifier(groth16py.VerifyingKey.from_snarkjs(json.dumps(vk)))
proof_text, public_text = json.dumps(proof), json.dumps(v["publicSignals"])
bad = list(v["publicSignals"])
bad[1] = str(int(bad[1]) + 1)
assert not verifier.verify_snarkjs(proof_text, json.dumps(bad)), "arkworks accepted a changed nullifier"
arkworks = timed(args.arkworks_rounds, lambda: verifier.verify_snarkjs(proof_text, public_text))


# py_ecc
def g1(p):
    return (bn.FQ(int(p[0])), bn.FQ(int(p[1])), bn.FQ(1))


def g2(p):
    return (bn.FQ2([int(p[0][0]), int(p[0][1])]), bn.FQ2([int(p[1][0]), int(p[1][1])]), bn.FQ2([1, 0]))


def py_ecc_verify(proof_json, signals):
    a, b, c = g1(proof_json["pi_a"]), g2(proof_json["pi_b"]), g1(proof_json["pi_c"])
    r = bn.curve_order
    if any(s >= r for s in signals):
        return False
    for p in (a, c):
        if not bn.is_on_curve(p, bn.b):
            return False
    if not bn.is_on_curve(b, bn.b2) or not bn.is_inf(bn.multiply(b, r)):
        return False
    ic = [g1(p) for p in vk["IC"]]
    vk_x = ic[0]
    for s, p in zip(signals, ic[1:]):
        vk_x = bn.add(vk_x, bn.multiply(p, s))
    alpha, beta, gamma, delta = g1(vk["vk_alpha_1"]), g2(vk["vk_beta_2"]), g2(vk["vk_gamma_2"]), g2(vk["vk_delta_2"])
    f = bn.pairing(b, a, final_exponentiate=False)
    f = f * bn.pairing(beta, bn.neg(alpha), final_exponentiate=False)
    f = f * bn.pairing(gamma, bn.neg(vk_x), final_exponentiate=False)
    f = f * bn.pairing(delta, bn.neg(c), final_exponentiate=False)
    return bn.final_exponentiate(f) == bn.FQ12.one()


py_ecc = timed(args.py_ecc_rounds, lambda: py_ecc_verify(proof, public))
bad_signals = list(public)
bad_signals[1] += 1
assert not py_ecc_verify(proof, bad_signals), "py_ecc reference accepted a changed nullifier"
print(json.dumps({"arkworks_ms": arkworks, "py_ecc_ms": py_ecc}))
