#if canImport(Glibc)
    import Glibc
#endif

/// Measures `ours` against `floor` in alternating batches, so both see the same machine state,
/// and reports the median time per operation of each and their ratio.
struct Comparison {
    let name: String
    let oursLabel: String
    let floorLabel: String
    let oursNanos: Double
    let floorNanos: Double
    var ratio: Double { oursNanos / floorNanos }
}

@inline(never)
func blackHole<T>(_ x: T) { withExtendedLifetime(x) {} }

func now() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}

func median(_ xs: [Double]) -> Double {
    let s = xs.sorted()
    return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
}

/// Runs `body` until a batch takes about `target` nanoseconds; returns the batch size.
func calibrate(target: UInt64 = 20_000_000, _ body: () -> Void) -> Int {
    var n = 1
    while true {
        let t0 = now()
        for _ in 0..<n { body() }
        let dt = now() - t0
        if dt >= target / 4 || n >= 1 << 22 { return max(1, Int(Double(n) * Double(target) / Double(max(dt, 1)))) }
        n *= 4
    }
}

func compare(
    _ name: String, ours oursLabel: String, floor floorLabel: String, rounds: Int = 21,
    ours: () -> Void, floor: () -> Void
) -> Comparison {
    for _ in 0..<3 {
        ours()
        floor()
    } // warm caches
    let batch = calibrate(floor)
    var a: [Double] = []
    var b: [Double] = []
    for r in 0..<rounds {
        // Alternate which goes first, so neither always runs on a warmer cache or clock.
        func time(_ f: () -> Void) -> Double {
            let t0 = now()
            for _ in 0..<batch { f() }
            return Double(now() - t0) / Double(batch)
        }
        if r % 2 == 0 {
            a.append(time(ours))
            b.append(time(floor))
        } else {
            b.append(time(floor))
            a.append(time(ours))
        }
    }
    return Comparison(name: name, oursLabel: oursLabel, floorLabel: floorLabel, oursNanos: median(a), floorNanos: median(b))
}

func format(_ nanos: Double) -> String {
    if nanos >= 1_000_000 { return String(format2(nanos / 1_000_000)) + " ms" }
    if nanos >= 1_000 { return String(format2(nanos / 1_000)) + " µs" }
    return String(format2(nanos)) + " ns"
}

func format2(_ x: Double) -> String {
    let r = (x * 100).rounded() / 100
    var s = String(r)
    if let dot = s.firstIndex(of: ".") {
        let decimals = s.distance(from: dot, to: s.endIndex) - 1
        if decimals < 2 { s += String(repeating: "0", count: 2 - decimals) }
    }
    return s
}

func markdownTable(_ rows: [Comparison]) -> String {
    var out = "| operation | Nearcard (median) | floor (median) | ops/s (Nearcard) | ops/s (floor) | ratio |\n|---|---|---|---|---|---|\n"
    for r in rows {
        out +=
            "| \(r.name) | \(format(r.oursNanos)) | \(format(r.floorNanos)) — \(r.floorLabel) | \(Int(1e9 / r.oursNanos)) | \(Int(1e9 / r.floorNanos)) | \(format2(r.ratio))× |\n"
    }
    return out
}
