#if canImport(Glibc)
import Glibc
#endif

// nearcard-bench [crypto] [--json]: runs the benchmarks and prints a Markdown table per group.
let args = CommandLine.arguments.dropFirst()
let groups = args.filter { !$0.hasPrefix("--") }
let wanted = groups.isEmpty ? ["crypto"] : Array(groups)

for group in wanted {
    switch group {
    case "crypto":
        print("## Crypto wrappers against their C libraries (median of 21 alternating batches, same run)\n")
        print(markdownTable(try cryptoBenchmarks()))
    default:
        print("unknown benchmark group \(group); known: crypto")
        exit(64)
    }
}
