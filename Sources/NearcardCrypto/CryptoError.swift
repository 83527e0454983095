@_exported public import NearcardErrors

/// The one error type of NearcardCrypto.
///
/// `kind` is what callers switch on; `message` is a sentence for people that says what failed,
/// on which input, and (where there is one) what to do. Messages never contain key material.
public typealias CryptoError = ModuleError<CryptoErrorKind>

/// What a `CryptoError` is about.
public enum CryptoErrorKind: Sendable, Equatable {
    /// A key's bytes are not a valid key of the expected type (wrong length, not on the curve, …).
    case invalidKey
    /// A signature has the wrong encoding or length (a signature that merely fails is not an error).
    case invalidSignature
    /// Authenticated decryption failed: wrong key, or the ciphertext or its associated data was altered.
    case authenticationFailed
    /// An argument is outside what the primitive accepts (nonce length, output length, …).
    case invalidArgument
    /// Text that should be JSON is not, or breaks a limit.
    case malformedJSON
    /// Text that should be base64/base58/multibase is not.
    case malformedEncoding
    /// A did:key failed to resolve; the code is the did:key specification's error name.
    case didKey(DIDKeyErrorCode)
    /// A JWS/JWT is not well formed (exit code 2 in the CLI).
    case malformedToken
    /// A key file is not one we wrote, is damaged, or does not match the identity.
    case keyFile
    /// The passphrase does not open the sealed key file.
    case wrongPassphrase
    /// The C library reported an error it should not have (out of memory, internal failure).
    case library
}

/// The error names of the did:key specification (https://w3c-ccg.github.io/did-key-spec/).
public enum DIDKeyErrorCode: String, Sendable, Equatable {
    case invalidDid
    case invalidDidUrl
    case invalidPublicKey
    case invalidPublicKeyLength
    case unsupportedPublicKeyType
    case representationNotSupported
}
