import ArgumentParser
import Foundation
import NearcardCrypto

/// `nearcard jwt …`: sign and verify compact JWS/JWT.
struct JWT: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "jwt",
        abstract: t("Sign and verify JWTs (ES256 with your DID key; verify ES256 and EdDSA)."),
        subcommands: [Sign.self, Verify.self])

    /// The largest claims document `jwt sign` reads.
    static let maximumClaimsLength = 64 * 1024

    struct Sign: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "sign",
            abstract: t("Read a JSON claims object on stdin; print a compact JWS signed ES256 with your DID key."),
            discussion: t("The header is {\"alg\":\"ES256\",\"kid\":\"<did>#<multibase>\",\"typ\":T}. Claims are signed as given (no claims are added)."))

        @OptionGroup var global: GlobalOptions

        @Option(help: ArgumentHelp(t("The header's typ.")))
        var typ: String = "JWT"

        func run() async throws {
            let input = try Console.readStdin(limit: JWT.maximumClaimsLength, what: t("the claims"))
            let claims: JSONValue
            do { claims = try JSONParser.parse(input) } catch {
                throw CLIError(.malformedInput, t("the claims on standard input are not JSON: %1$@", t.say(error.phrase)))
            }
            guard claims.objectValue != nil else { throw CLIError(.malformedInput, t("the claims on standard input must be a JSON object")) }
            let keys = try global.unlockIdentity()
            let header: JSONObject = ["kid": .string(keys.keyID), "typ": .string(typ)]
            Console.out(try CompactJWS.sign(payload: Array(claims.compactText.utf8), header: header, signer: keys.p256))
        }
    }

    struct Verify: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "verify",
            abstract: t("Verify an ES256 or EdDSA token; print {\"header\", \"claims\"} when valid."),
            discussion: t(
                """
                The key is the JWK in --jwk FILE, else the did:key in the header's kid (fragment: the key's \
                multibase, or keys-1), else a did:key iss. Exit 0 valid, 1 signature or time claims fail \
                (exp, nbf, iat checked with --leeway), 2 malformed token or key file.
                """
            ))

        /// (Accepted like everywhere, README: verifying reads no home.)
        @OptionGroup var global: GlobalOptions

        @Argument(help: ArgumentHelp(t("The compact token, or - to read it from stdin.")))
        var token: String

        @Option(help: ArgumentHelp(t("Verify with the public JWK in this file."), valueName: "FILE"))
        var jwk: String?

        @Option(parsing: .unconditional, help: ArgumentHelp(t("Seconds of clock difference tolerated on exp, nbf and iat.")))
        var leeway: Double = 60

        @Option(parsing: .unconditional, help: ArgumentHelp(t("Verify as of this Unix time instead of now."), valueName: "UNIXTIME"))
        var at: Double?

        func validate() throws {
            if !(leeway >= 0 && leeway <= 86_400) { throw ValidationError(t("--leeway must be between 0 and 86400 seconds")) }
            if let at, !(at >= 0 && at <= 253_402_300_799) { throw ValidationError(t("--at must be a Unix time in seconds, from 0 to the year 9999")) }
        }

        func run() async throws {
            var text = token
            if token == "-" {
                text = String(decoding: try Console.readStdin(limit: CompactJWS.maximumLength, what: t("the token")), as: UTF8.self)
            }
            text = text.trimmingCharacters(in: .whitespacesAndNewlines)
            var key: DIDKey?
            if let jwk {
                guard let data = FileManager.default.contents(atPath: jwk) else {
                    throw CLIError(.malformedInput, t("cannot read the JWK file %1$@", jwk))
                }
                do { key = try JWK(json: JSONParser(maximumLength: 64 * 1024).parse([UInt8](data))).key } catch {
                    throw CLIError(.malformedInput, t("%1$@ is not a usable public JWK: %2$@", jwk, t.say(error.phrase)))
                }
            }
            let verifier = JWTVerifier(now: at ?? Date().timeIntervalSince1970, leeway: leeway)
            switch try verifier.verify(text, key: key) {
            case .valid(let header, let claims, _):
                Console.json(["header": .object(header), "claims": .object(claims)])
            case .invalid(let failure):
                throw CLIError(.checkFailed, t("token not valid: %1$@", "\(failure)"))
            }
        }
    }
}
