/// DID documents for did:key, built as the did:key specification's "Document Creation Algorithm" does.
extension DIDKey {
    /// How verification methods carry the key (the spec's `publicKeyFormat` option).
    public enum DocumentFormat: String, Sendable, CaseIterable {
        /// `Multikey` with `publicKeyMultibase` (the spec's default).
        case multikey = "Multikey"
        /// `JsonWebKey2020` with `publicKeyJwk`.
        case jsonWebKey2020 = "JsonWebKey2020"

        var context: String {
            switch self {
            case .multikey: "https://w3id.org/security/multikey/v1"
            case .jsonWebKey2020: "https://w3id.org/security/suites/jws-2020/v1"
            }
        }
    }

    /// The DID document. An Ed25519 key also gets the derived X25519 key-agreement method
    /// (`enableEncryptionKeyDerivation`, the spec's default); an X25519 key is for key agreement only.
    public func document(format: DocumentFormat = .multikey) -> JSONValue {
        let did = self.did
        var methods: [JSONValue] = []
        var signingRefs: [JSONValue] = []
        var agreementRefs: [JSONValue] = []

        let primary = verificationMethod(controller: did, format: format)
        methods.append(primary)
        let primaryID = JSONValue.string(keyID)
        switch keyType {
        case .x25519:
            agreementRefs.append(primaryID)
        case .ed25519:
            signingRefs.append(primaryID)
            if let x = try? ed25519PublicKey()?.x25519() {
                let derived = DIDKey(x)
                methods.append(derived.verificationMethod(controller: did, format: format, idPrefix: did))
                agreementRefs.append(.string(did + "#" + derived.multibaseValue))
            }
        case .p256, .p384, .p521:
            // ECDH works on the NIST curves, so their key also serves key agreement (as the spec's vectors show).
            signingRefs.append(primaryID)
            agreementRefs.append(primaryID)
        }

        var doc = JSONObject()
        doc["@context"] = .array([.string("https://www.w3.org/ns/did/v1"), .string(format.context)])
        doc["id"] = .string(did)
        doc["verificationMethod"] = .array(methods)
        if !signingRefs.isEmpty {
            doc["authentication"] = .array(signingRefs)
            doc["assertionMethod"] = .array(signingRefs)
            doc["capabilityInvocation"] = .array(signingRefs)
            doc["capabilityDelegation"] = .array(signingRefs)
        }
        doc["keyAgreement"] = .array(agreementRefs)
        return .object(doc)
    }

    func verificationMethod(controller: String, format: DocumentFormat, idPrefix: String? = nil) -> JSONValue {
        var vm = JSONObject()
        vm["id"] = .string((idPrefix ?? did) + "#" + multibaseValue)
        vm["type"] = .string(format.rawValue)
        vm["controller"] = .string(controller)
        switch format {
        case .multikey: vm["publicKeyMultibase"] = .string(multibaseValue)
        case .jsonWebKey2020: vm["publicKeyJwk"] = JWK(self).json
        }
        return .object(vm)
    }
}
