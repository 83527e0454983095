import Foundation
import NearcardCrypto
import NearcardProcess
import NearcardSemaphore
import NearcardSimulation

/// Issue 9: Semaphore v4 (Groth16/BN254) verification of the real depth-10 proof, beside arkworks
/// (groth16py) and py_ecc (pure Python) verifying the same proof in the same run.
func semaphoreBenchmarks(root: URL) throws -> String {
    let vector = root.appendingPathComponent("Tests/Vectors/semaphore/v4-depth10-proof.json")
    let bundle = try JSONParser.parse(String(contentsOf: vector, encoding: .utf8))
    let text = bundle["semaphore_proof"]!.canonicalText

    func verifyOnce() -> Double {
        let t0 = now()
        let proof = try! SemaphoreProof(json: text)
        guard case .success = SemaphoreVerifier.verify(proof) else { fatalError("the vector proof did not verify") }
        return Double(now() - t0) / 1e6
    }
    func parseOnce() -> Double {
        let t0 = now()
        blackHole(try! SemaphoreProof(json: text))
        return Double(now() - t0) / 1e6
    }
    for _ in 0..<3 { _ = verifyOnce() } // warm: the verification key for depth 10 is prepared once
    var ours: [Double] = []
    var parse: [Double] = []
    for _ in 0..<16 {
        ours.append(verifyOnce())
        parse.append(parseOnce())
    }

    // The references, between our two halves.
    let python = root.appendingPathComponent("benchmarks/.venv/bin/python3").path
    let script = root.appendingPathComponent("benchmarks/reference/semaphore_verify.py").path
    let run = try ChildProcess.capture([python, script, vector.path, "--arkworks-rounds", "31", "--py-ecc-rounds", "5"], timeout: 600)
    guard run.code == 0, let reference = try? JSONParser.parse(run.stdout) else {
        throw BenchError("the reference verifiers failed (run scripts/setup-bench-python.sh)")
    }
    for _ in 0..<15 {
        ours.append(verifyOnce())
        parse.append(parseOnce())
    }

    let mine = median(ours)
    let arkworks = median(reference["arkworks_ms"]!.arrayValue!.map { $0.doubleValue! })
    let pyecc = median(reference["py_ecc_ms"]!.arrayValue!.map { $0.doubleValue! })
    var out = "| verifier | median per verification | runs | its time ÷ Nearcard's |\n|---|---|---|---|\n"
    out += "| Nearcard (Swift: parse, curve and subgroup checks, 4-pairing product) | \(format2(mine)) ms | \(ours.count) | 1.00× |\n"
    out += "| — of which parsing and point checks | \(format2(median(parse))) ms | \(parse.count) | |\n"
    out += "| groth16py 0.2 (arkworks, Rust; prepared verifier, JSON parsing included) | \(format2(arkworks)) ms | 31 | \(format2(arkworks / mine))× |\n"
    out += "| py_ecc 8 (pure Python, optimized_bn128) | \(format2(pyecc)) ms | 5 | \(format2(pyecc / mine))× |\n"
    out += "\nTarget ≤ 10 ms per verification: \(mine <= 10 ? "met" : "NOT met") (\(format2(mine)) ms).\n"
    out += "Target ≤ 2× arkworks in the same run (issue 20): \(mine <= 2 * arkworks ? "met" : "NOT met") (\(format2(mine / arkworks))×).\n"
    return out
}

struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ d: String) { description = d }
}
