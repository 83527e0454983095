import ArgumentParser
import Foundation
import NearcardCrypto
import NearcardModel
import NearcardQR
import NearcardStore

/// `nearcard present REQUEST`: answer an OpenID4VP request with a per-verifier DID.
struct Present: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Answer an openid4vp:// request: show who asks for what, ask consent, print the VP token.",
        discussion: """
        Each verifier (by client_id host) gets its own did:key, derived from your identity so a backup \
        restores it, so two verifiers cannot link your presentations. The token carries the nonce, \
        aud = client_id and a 5-minute expiry. Nearcard prints it (and the response_uri to post it to); \
        it does not send it anywhere.
        """)

    @OptionGroup var global: GlobalOptions
    @Argument(help: "The request (openid4vp://…), or - to read it from stdin.") var request: String
    @Flag(name: .shortAndLong, help: "Consent without asking.") var yes = false
    @Flag(help: "Also show the VP token as a QR code.") var qr = false
    @Flag(help: "Print {vp_token, state, response_uri, did} as JSON.") var json = false

    func run() async throws {
        var text = request
        if request == "-" { text = String(decoding: try Console.readStdin(limit: PresentationRequest.maximumLength, what: "the request"), as: UTF8.self) }
        let req: PresentationRequest
        do { req = try PresentationRequest(parsing: text.trimmingCharacters(in: .whitespacesAndNewlines)) } catch {
            throw CLIError(.malformedInput, "the request is refused: \(error.message)")
        }
        let db = try global.database()
        guard let mine = try db.myCard() else { throw CLIError(.notFound, "you have no card to present; make one with: nearcard card set …") }
        let fields = req.requestedFields(from: try db.sharingPolicy().fields)
        let shown = mine.card.filtered(to: fields)
        if !json {
            Console.out("Verifier   \(req.clientID) (\(req.verifierHost))")
            Console.out("Asks for   \(req.requestedClaims.isEmpty ? "(no specific claims: your sharing selection)" : req.requestedClaims.joined(separator: ", "))")
            Console.out("You give   \(CardField.allCases.filter { shown.value(of: $0) != nil }.map(\.rawValue).joined(separator: ", "))")
        }
        if !yes {
            guard Console.stdinIsTerminal else { throw CLIError(.malformedInput, "no terminal to ask for consent on: pass --yes to consent") }
            guard let a = await Prompter().ask("Present these to \(req.verifierHost)? [y/N] ", timeout: 120),
                  ["y", "yes"].contains(a.lowercased()) else {
                throw CLIError(.checkFailed, "declined; nothing was presented")
            }
        }
        let (token, did) = try Presentation.token(for: req, card: mine.card, fields: fields, identity: try global.unlockIdentity())
        if json {
            Console.json(["vp_token": .string(token), "state": .string(req.state), "response_uri": req.responseURI.map { .string($0) } ?? .null,
                          "did": .string(did)])
        } else {
            Console.out("Your DID for this verifier: \(did)")
            if let uri = req.responseURI { Console.out("Post vp_token and state=\(req.state) to \(uri)") }
            Console.out(token)
        }
        if qr { try await QR.Make.show([try QRMatrix.encode(Array(token.utf8))], ansi: Console.stdoutIsTerminal, caption: "VP token for \(req.verifierHost)") }
    }
}

/// `nearcard trust …`: issuers whose signatures make a scanned card verified.
struct Trust: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Manage trusted issuers (their signed cards and credentials scan as verified).",
        discussion: "Contacts you exchanged with in person are trusted without being listed here.",
        subcommands: [Add.self, Remove.self, List.self], defaultSubcommand: List.self)

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Trust a DID as an issuer.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The issuer's did:key.") var did: String
        @Option(help: "A note (who this is).") var note: String?
        func run() async throws {
            _ = try DIDKey(parsing: did)
            try global.database().addTrustAnchor(did, note: note)
            Console.out("Trusted \(did)")
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Stop trusting a DID.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The issuer's did:key.") var did: String
        func run() async throws {
            guard try global.database().removeTrustAnchor(did) else { throw CLIError(.notFound, "\(did) is not in your trust list") }
            Console.out("No longer trusted: \(did)")
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List trusted issuers.")
        @OptionGroup var global: GlobalOptions
        @Flag(help: "Print as JSON.") var json = false
        func run() async throws {
            let anchors = try global.database().trustAnchors()
            if json {
                Console.json(.array(anchors.map { ["did": .string($0.did), "addedAt": .string(ISO8601.string($0.addedAt)), "note": $0.note.map { .string($0) } ?? .null] }))
            } else if anchors.isEmpty {
                Console.out("No trusted issuers (contacts met in person count as trusted anyway).")
            } else {
                for a in anchors { Console.out("\(a.did)\(a.note.map { "  — \($0)" } ?? "")") }
            }
        }
    }
}

/// `nearcard credentials …`: imported verifiable credentials.
struct Credentials: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List or show the verifiable credentials you imported.",
        subcommands: [List.self, Show.self], defaultSubcommand: List.self)

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List imported credentials.")
        @OptionGroup var global: GlobalOptions
        @Flag(help: "Print as JSON.") var json = false
        func run() async throws {
            let all = try global.database().credentials()
            if json { Console.json(.array(all.map(\.json))); return }
            if all.isEmpty { Console.out("No credentials."); return }
            ContactDisplay.columns(["ID", "TYPE", "ISSUER", "STATUS", "EXPIRES"], all.map { c in
                [String(c.id.prefix(24)), c.types.last ?? "", String(c.issuer.prefix(30)) + "…", c.status.rawValue, c.expiresAt.map(ISO8601.string) ?? "-"]
            })
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show one credential.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The credential id (or a unique part of it).") var id: String
        @Flag(help: "Print as JSON.") var json = false
        func run() async throws {
            let c = try global.database().credential(id)
            if json { Console.json(c.json); return }
            Console.table([("ID", c.id), ("Types", c.types.joined(separator: ", ")), ("Issuer", c.issuer), ("Subject", c.subject ?? "-"),
                           ("Status", "\(c.status.rawValue): \(c.reason)"), ("Issued", c.issuedAt.map(ISO8601.string) ?? "-"),
                           ("Expires", c.expiresAt.map(ISO8601.string) ?? "-"), ("Imported", ISO8601.string(c.importedAt))])
        }
    }
}

