import Foundation
import NearcardCrypto

/// Loads the published vectors copied into Tests/Vectors (sources and licences in its README).
/// Vectors are read with Foundation's parser, not ours, so a bug in our JSON cannot hide a bug elsewhere.
enum Vectors {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Vectors")

    static func json(_ path: String) throws -> Any {
        try JSONSerialization.jsonObject(with: Data(contentsOf: root.appendingPathComponent(path)), options: [.fragmentsAllowed])
    }

    static func bytes(_ path: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: root.appendingPathComponent(path)))
    }

    /// Every test of a Wycheproof file with its group.
    static func wycheproof(_ name: String) throws -> [(group: [String: Any], test: [String: Any])] {
        let file = try json("wycheproof/\(name).json") as! [String: Any]
        var out: [(group: [String: Any], test: [String: Any])] = []
        for group in file["testGroups"] as! [[String: Any]] {
            for test in group["tests"] as! [[String: Any]] { out.append((group, test)) }
        }
        return out
    }
}

func hex(_ s: Any?) -> [UInt8] { try! Hex.decode(s as! String) }
