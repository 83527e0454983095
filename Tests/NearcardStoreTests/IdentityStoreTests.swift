import Foundation
import NearcardCrypto
import NearcardStore
import Testing

func temporaryHome() -> NearcardHome {
    NearcardHome(path: FileManager.default.temporaryDirectory.appendingPathComponent("nearcard-store-\(UUID().uuidString)").path)
}

@Suite struct IdentityStoreTests {
    @Test func createUnlockAndRefuseToOverwrite() throws {
        let home = temporaryHome()
        defer { try? FileManager.default.removeItem(atPath: home.path) }
        let store = IdentityStore(home: home)
        let identity = try store.create(name: "Ada", passphrase: nil)
        let keys = try store.unlock { nil }
        #expect(keys.publicIdentity(name: "Ada") == identity)
        #expect(throws: StoreError.self) { try store.create(name: "Eve", passphrase: nil) }
        #expect(try store.loadPublic().name == "Ada")
        // No temporary files are left behind.
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: home.path).filter { $0.hasPrefix(".") }
        #expect(leftovers.isEmpty)
    }

    /// identity.json from one identity with secret-keys.json from another: refused, both untouched.
    @Test func mismatchedPairIsRefused() throws {
        let a = temporaryHome()
        let b = temporaryHome()
        defer {
            try? FileManager.default.removeItem(atPath: a.path)
            try? FileManager.default.removeItem(atPath: b.path)
        }
        try IdentityStore(home: a).create(name: nil, passphrase: nil)
        try IdentityStore(home: b).create(name: nil, passphrase: nil)
        try FileManager.default.removeItem(atPath: a.identityPath)
        try FileManager.default.copyItem(atPath: b.identityPath, toPath: a.identityPath)
        #expect {
            try IdentityStore(home: a).unlock { nil }
        } throws: { ($0 as? StoreError)?.kind == .keyFile && "\($0)".contains("do not match") }
    }

    @Test func incompleteIdentityIsNotOverwritten() throws {
        let home = temporaryHome()
        defer { try? FileManager.default.removeItem(atPath: home.path) }
        let store = IdentityStore(home: home)
        try store.create(name: nil, passphrase: nil)
        try FileManager.default.removeItem(atPath: home.identityPath)
        #expect(throws: StoreError.self) { try store.loadPublic() }
        #expect(throws: StoreError.self) { try store.create(name: nil, passphrase: nil) }
        #expect(FileManager.default.fileExists(atPath: home.secretKeysPath))
    }

    @Test func atomicWriteWithoutReplaceKeepsTheOriginal() throws {
        let home = temporaryHome()
        defer { try? FileManager.default.removeItem(atPath: home.path) }
        try FileIO.makeDirectory(home.path)
        let path = home.path + "/f"
        try FileIO.writeAtomically(SecureBytes(Array("one".utf8)), to: path, replace: false)
        #expect(throws: StoreError.self) { try FileIO.writeAtomically(SecureBytes(Array("two".utf8)), to: path, replace: false) }
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "one")
        try FileIO.writeAtomically(SecureBytes(Array("three".utf8)), to: path, replace: true)
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "three")
        #expect(FileIO.mode(path) == 0o600)
    }

    @Test func homeResolutionOrder() {
        #expect(NearcardHome.resolve(explicit: "/x/", environment: ["NEARCARD_HOME": "/y"]).path == "/x")
        #expect(NearcardHome.resolve(explicit: nil, environment: ["NEARCARD_HOME": "/y", "XDG_DATA_HOME": "/z"]).path == "/y")
        #expect(NearcardHome.resolve(explicit: nil, environment: ["XDG_DATA_HOME": "/z", "HOME": "/h"]).path == "/z/nearcard")
        #expect(NearcardHome.resolve(explicit: nil, environment: ["HOME": "/h"]).path == "/h/.local/share/nearcard")
    }
}
