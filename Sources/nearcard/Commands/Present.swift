import ArgumentParser
import Foundation
import NearcardCrypto
import NearcardModel
import NearcardNode
import NearcardQR

/// `nearcard present REQUEST`: answer an OpenID4VP request with a per-verifier DID.
struct Present: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "present",
        abstract: t("Answer an openid4vp:// request: show who asks for what, ask consent, print the VP token."),
        discussion: t(
            """
            Each verifier (by client_id host) gets its own did:key, derived from your identity so a backup \
            restores it, so two verifiers cannot link your presentations. The token carries the nonce, \
            aud = client_id and a 5-minute expiry. Nearcard prints it (and the response_uri to post it to); \
            it does not send it anywhere.
            """
        ))

    @OptionGroup var global: GlobalOptions
    @Argument(help: ArgumentHelp(t("The request (openid4vp://…), or - to read it from stdin."))) var request: String
    @Flag(name: .shortAndLong, help: ArgumentHelp(t("Consent without asking."))) var yes = false
    @Flag(help: ArgumentHelp(t("Also show the VP token as a QR code."))) var qr = false
    @Flag(help: ArgumentHelp(t("Print {vp_token, state, response_uri, did} as JSON."))) var json = false

    func run() async throws {
        var text = request
        if request == "-" { text = String(decoding: try Console.readStdin(limit: PresentationRequest.maximumLength, what: t("the request")), as: UTF8.self) }
        let req: PresentationRequest
        do { req = try PresentationRequest(parsing: text.trimmingCharacters(in: .whitespacesAndNewlines)) } catch {
            throw CLIError(.malformedInput, t("the request is refused: %1$@", t.say(error.phrase)))
        }
        let db = try global.database()
        guard let mine = try db.myCard() else { throw CLIError(.notFound, t("you have no card to present; make one with: nearcard card set …")) }
        let fields = req.requestedFields(from: try db.sharingPolicy().fields)
        let shown = mine.card.filtered(to: fields)
        if !json {
            Console.out(t("Verifier   %1$@ (%2$@)", req.clientID, req.verifierHost))
            Console.out(
                t(
                    "Asks for   %1$@",
                    req.requestedClaims.isEmpty ? t("(no specific claims: your sharing selection)") : req.requestedClaims.joined(separator: ", ")))
            Console.out(t("You give   %1$@", CardField.allCases.filter { shown.value(of: $0) != nil }.map(\.rawValue).joined(separator: ", ")))
        }
        if !yes {
            guard Console.stdinIsTerminal else { throw CLIError(.malformedInput, t("no terminal to ask for consent on: pass --yes to consent")) }
            guard let a = await Prompter().ask(t("Present these to %1$@? [y/N] ", req.verifierHost), timeout: 120),
                TerminalConsent.isYes(a)
            else {
                throw CLIError(.checkFailed, t("declined; nothing was presented"))
            }
        }
        let (token, did) = try Presentation.token(for: req, card: mine.card, fields: fields, identity: try global.unlockIdentity())
        if json {
            Console.json([
                "vp_token": .string(token), "state": .string(req.state), "response_uri": req.responseURI.map { .string($0) } ?? .null,
                "did": .string(did),
            ])
        } else {
            Console.out(t("Your DID for this verifier: %1$@", did))
            if let uri = req.responseURI { Console.out(t("Post vp_token and state=%1$@ to %2$@", req.state, uri)) }
            Console.out(token)
        }
        if qr {
            try await QR.Make.show([try QRMatrix.encode(Array(token.utf8))], ansi: Console.stdoutIsTerminal, caption: t("VP token for %1$@", req.verifierHost))
        }
    }
}
