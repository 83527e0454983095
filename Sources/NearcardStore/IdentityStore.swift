public import NearcardCrypto

/// The identity in a Nearcard home: `identity.json` (public) and `secret-keys.json` (0600,
/// optionally sealed under a passphrase). Creating never overwrites; reading never repairs.
public struct IdentityStore: Sendable {
    public let home: NearcardHome

    public init(home: NearcardHome) { self.home = home }

    /// Whether any part of an identity is present.
    public var exists: Bool { FileIO.exists(home.identityPath) || FileIO.exists(home.secretKeysPath) }

    /// Creates a new identity. Refuses, naming the directory, when one (or part of one) exists.
    @discardableResult
    public func create(name: String?, passphrase: SecureBytes?, sealing: KeyFile.SealingParameters = .init()) throws(StoreError) -> PublicIdentity {
        if exists {
            throw StoreError(
                .identityExists,
                Phrase("an identity already exists in %1$@; Nearcard never overwrites keys (use another --home, or move that directory away)", home.path))
        }
        try FileIO.makeDirectory(home.path, mode: 0o700)
        let keys = IdentityKeys.generate()
        let identity = keys.publicIdentity(name: name)
        let secrets: SecureBytes
        do { secrets = try KeyFile.encodeSecrets(keys, passphrase: passphrase, parameters: sealing) } catch { throw StoreError(error) }
        try FileIO.writeAtomically(secrets, to: home.secretKeysPath, mode: 0o600, replace: false)
        do {
            try FileIO.writeAtomically(SecureBytes(KeyFile.encodeIdentity(identity)), to: home.identityPath, mode: 0o600, replace: false)
        } catch {
            // We created the secret file a moment ago; without its public half it is useless, so take it back.
            unlinkQuietly(home.secretKeysPath)
            throw error
        }
        return identity
    }

    /// The public identity (no passphrase needed).
    public func loadPublic() throws(StoreError) -> PublicIdentity {
        guard FileIO.exists(home.identityPath) else {
            if FileIO.exists(home.secretKeysPath) {
                throw StoreError(
                    .keyFile,
                    Phrase("%1$@ is missing but %2$@ exists; the identity is incomplete and was left untouched", home.identityPath, home.secretKeysPath))
            }
            throw StoreError(.noIdentity, Phrase("no identity in %1$@; create one with: nearcard init --name \"Your Name\"", home.path))
        }
        let bytes = try FileIO.readSmallFile(home.identityPath, limit: KeyFile.maximumLength)
        do { return try KeyFile.decodeIdentity(bytes.bytes, name: home.identityPath) } catch { throw StoreError(error) }
    }

    /// Whether the secret keys are sealed under a passphrase.
    package func isSealed() throws(StoreError) -> Bool {
        let bytes = try readSecrets()
        do { return try KeyFile.isSealed(bytes, name: home.secretKeysPath) } catch { throw StoreError(error) }
    }

    /// Checks the secret-key file without asking for a passphrase: it exists, only this user can read it,
    /// and it is a Nearcard key file; unsealed, its keys are also checked against identity.json (sealed,
    /// that takes the passphrase). Returns whether the keys are sealed; throws what is wrong (`.keyFile`).
    public func checkSecrets() throws(StoreError) -> Bool {
        guard try isSealed() else {
            do { _ = try unlock(passphrase: { nil }) } catch let e as StoreError { throw e } catch {
                throw StoreError(.keyFile, Phrase("%1$@: %2$@", home.secretKeysPath, "\(error)"))
            }
            return false
        }
        return true
    }

    /// Opens the secret keys; `passphrase` is asked only when they are sealed. The keys must match
    /// identity.json, or the pair is refused as damaged.
    public func unlock(passphrase: () throws -> SecureBytes?) throws -> IdentityKeys {
        let identity = try loadPublic()
        let bytes = try readSecrets()
        let keys: IdentityKeys
        do { keys = try KeyFile.decodeSecrets(bytes, name: home.secretKeysPath, passphrase: passphrase) } catch let error as CryptoError {
            throw StoreError(error)
        }
        let derived = keys.publicIdentity(name: identity.name)
        guard derived == identity else {
            throw StoreError(.keyFile, Phrase("the keys in %1$@ do not match %2$@; both were left untouched", home.secretKeysPath, home.identityPath))
        }
        return keys
    }

    /// Seals this identity's secret keys (`keys`, as `unlock` opened them) under `passphrase` (nil:
    /// unsealed, readable by this user only). All or nothing: the new file is read back with the new
    /// passphrase to the same keys before it replaces the old one by a rename; a failure at any step
    /// leaves the old file as it was.
    public func reseal(_ keys: IdentityKeys, to passphrase: SecureBytes?, sealing: KeyFile.SealingParameters = .init()) throws {
        let identity = try loadPublic()
        guard keys.publicIdentity(name: identity.name) == identity else {
            throw StoreError(.keyFile, Phrase("these keys are not the identity in %1$@; %2$@ was left as it was", home.identityPath, home.secretKeysPath))
        }
        let secrets: SecureBytes
        do { secrets = try KeyFile.encodeSecrets(keys, passphrase: passphrase, parameters: sealing) } catch { throw StoreError(error) }
        let back = try KeyFile.decodeSecrets(secrets, name: home.secretKeysPath, passphrase: { passphrase })
        guard back.publicIdentity(name: nil) == keys.publicIdentity(name: nil) else {
            throw StoreError(.keyFile, Phrase("the re-sealed keys did not read back as the same keys; %1$@ was left as it was", home.secretKeysPath))
        }
        try FileIO.writeAtomically(secrets, to: home.secretKeysPath, mode: 0o600, replace: true)
    }

    private func readSecrets() throws(StoreError) -> SecureBytes {
        guard FileIO.exists(home.secretKeysPath) else {
            if FileIO.exists(home.identityPath) {
                throw StoreError(.keyFile, Phrase("%1$@ is missing; this identity's secret keys are gone (restore them from a backup)", home.secretKeysPath))
            }
            throw StoreError(.noIdentity, Phrase("no identity in %1$@; create one with: nearcard init --name \"Your Name\"", home.path))
        }
        return try FileIO.readSmallFile(home.secretKeysPath, limit: KeyFile.maximumLength, privateOnly: true)
    }

    private func unlinkQuietly(_ path: String) {
        _ = path.withCString { unlink($0) }
    }
}

#if canImport(Glibc)
    import Glibc
#endif
