import Foundation
import NearcardCrypto
import Testing

/// Contact ids come from `Sodium.randomUUIDString()`: version-4 UUIDs in the text form Foundation
/// (and the iOS app's records) use.
@Suite struct RandomUUIDTests {
    @Test func randomUUIDsAreVersion4AndDistinct() throws {
        var seen = Set<String>()
        for _ in 0..<2000 {
            let text = Sodium.randomUUIDString()
            let uuid = try #require(UUID(uuidString: text), "\(text) is not a UUID")
            #expect(uuid.uuidString == text)
            let bytes = withUnsafeBytes(of: uuid.uuid) { Array($0) }
            #expect(bytes[6] >> 4 == 4, "version nibble of \(text)")
            #expect(bytes[8] >> 6 == 0b10, "variant bits of \(text)")
            seen.insert(text)
        }
        #expect(seen.count == 2000)
    }
}
