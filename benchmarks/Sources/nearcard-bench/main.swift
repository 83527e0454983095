import Foundation
#if canImport(Glibc)
import Glibc
#endif

// nearcard-bench [crypto] [semaphore]: runs the benchmarks and prints a Markdown table per group.
let args = CommandLine.arguments.dropFirst()
let groups = args.filter { !$0.hasPrefix("--") }
let wanted = groups.isEmpty ? ["crypto", "semaphore"] : Array(groups)

for group in wanted {
    switch group {
    case "crypto":
        print("## Crypto wrappers against their C libraries (median of 21 alternating batches, same run)\n")
        print(markdownTable(try cryptoBenchmarks()))
    case "semaphore":
        print("## Semaphore v4 proof verification (depth 10), beside arkworks and py_ecc on the same proof, same run\n")
        // Run from benchmarks/ (make bench): the package root is one level up.
        let root = URL(fileURLWithPath: FileManager.default.currentDirectoryPath).deletingLastPathComponent()
        print(try semaphoreBenchmarks(root: root))
    default:
        print("unknown benchmark group \(group); known: crypto, semaphore")
        exit(64)
    }
}
