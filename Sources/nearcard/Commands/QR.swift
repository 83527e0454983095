public import ArgumentParser
import Foundation
import NearcardControl
import NearcardCrypto
import NearcardModel
import NearcardNode
import NearcardQR
import NearcardScan

#if canImport(Glibc)
    import Glibc
#endif

/// `nearcard qr …`: one-way sharing through QR codes.
extension CardCode.Format: @retroactive ExpressibleByArgument {}

struct QR: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "qr",
        abstract: t("Make a QR code of your card, or scan one (text or image)."),
        subcommands: [Make.self, Scan.self, Invite.self])

    typealias Format = CardCode.Format

    struct Make: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "make",
            abstract: t("Show your card as a QR code (terminal), or write it as PNG/SVG or raw text."),
            discussion: t(
                """
                plaintext: the iOS app's plain card (anyone can read it; nobody can verify it). zk: a \
                selective-disclosure proof any scanner can check (Nearcard's zkProof). did-signed: a \
                BusinessCardCredential VC-JWT signed with your DID key (what the iOS app calls didSigned). \
                zk and did-signed carry your DID, which stays the same in every code (by design: it is what \
                lets a scanner check the card); plaintext carries only the fields you share, a fresh card id \
                and the time the code was made. Codes carry the fields the iOS formats know (name, email, \
                phone, company, title, social profiles, skills): pronouns and a photo travel only in an \
                exchange. A payload too large for one code (2331 bytes; in the terminal, the largest code the window \
                fits) is compressed (sce1:) when that is shorter. One code is shown: without --format, the \
                smallest of the three that fits (usually plaintext), and the line under it says which and \
                why. When no code of the card fits the terminal window and your node is listening (listen or \
                ui), an invitation is shown instead: a small code (one use, 5 minutes) that brings your whole \
                card to whoever scans it with `nearcard exchange --invite-image`; else the line says the \
                window size it needs. --frames splits a card too large for one code into sqc1 frames that \
                each fit: the terminal shows them one after another, --out writes FILE-1.png, FILE-2.png…, \
                --text prints one per line. In the terminal a code is drawn with half blocks (one module \
                across, two down) when it fits the window that way, else with sextant characters (two \
                across, three down), and says so; --glyphs chooses. Words go beside the code when the window \
                has room to its right.
                """))

        @OptionGroup var global: GlobalOptions
        @Option(help: ArgumentHelp(t("plaintext, zk, or did-signed (default: the smallest that fits one code)."))) var format: Format?
        @Option(help: ArgumentHelp(t("Fields to include (default: your sharing selection)."), valueName: "FIELDS")) var fields: String?
        @Option(help: ArgumentHelp(t("How long the code is valid: 30m, 24h, 7d (at most 365d)."), valueName: "DURATION")) var expires: String = "24h"
        @Option(help: ArgumentHelp(t("Write FILE.png or FILE.svg instead of drawing in the terminal."), valueName: "FILE")) var out: String?
        @Flag(help: ArgumentHelp(t("Print the raw QR text."))) var text = false
        @Flag(help: ArgumentHelp(t("A card too large for one code: show it in frames one after another (files FILE-1.png…, lines of --text).")))
        var frames = false
        @Option(help: ArgumentHelp(t("How the terminal draws it: auto, half (half blocks), sextant."), valueName: "GLYPHS"))
        var glyphs: String = "auto"

        func validate() throws {
            _ = try Durations.parse(expires)
            if glyphs != "auto" && QRMatrix.Glyphs(rawValue: glyphs) == nil {
                throw ValidationError(t("--glyphs must be auto, half or sextant"))
            }
            if let out, !(out.hasSuffix(".png") || out.hasSuffix(".svg")) { throw ValidationError(t("--out must end in .png or .svg")) }
        }

        /// The order formats are tried in when none is given: each carries the card; the smallest that
        /// fits one code is shown.
        static let byDefault: [Format] = [.plaintext, .didSigned, .zk]

        func run() async throws {
            let chosen = try fields.map { try CardField.parseList($0) }
            let app = NearcardApp(runtime: NodeRuntime.open(try NodeSetup.context(global, consent: DeclineAll(reason: "not listening"))))
            guard let mine = try app.card().card else { throw CLIError(.notFound, t("you have no card yet; make one with: nearcard card set --name …")) }
            let now = Date()
            let until = now.addingTimeInterval(try Durations.parse(expires))
            // Signed inside the facade (the web app's codes too), with keys that never reach this face.
            // Each candidate as one code would carry it (compressed when that is shorter), smallest first.
            let candidates = try (format.map { [$0] } ?? Self.byDefault).map { f in
                let payload = try app.cardCode(f, fields: chosen, now: now, until: until)
                // Compressed (sce1:) when that is shorter, for a code that must be small: a bare JWT
                // (did-signed) is read as it is.
                return (format: f, payload: payload, packed: payload.hasPrefix("eyJ") ? payload : try Compressed.encode(payload))
            }.sorted { $0.packed.utf8.count < $1.packed.utf8.count }
            let window = out == nil && !text && Console.stdoutIsTerminal ? Console.terminalSize : nil

            if frames {
                try await showFrames(candidates[0].format, candidates[0].payload, name: mine.name, until: until, window: window)
                return
            }
            // One code: the smallest candidate that fits one (the window's, or the largest code).
            let why: (Format) -> String? = { f in
                guard self.format == nil, candidates.count > 1 else { return nil }
                switch f {
                case .plaintext: return t("plaintext: the smallest code of your card (anyone can read it; --format zk lets a scanner verify it)")
                default: return t("%1$@: the smallest code of your card that fits (a scanner can verify it)", f.rawValue)
                }
            }
            guard let window else {
                // Files and text: the largest code, compressed only when it must be.
                guard let best = candidates.first(where: { $0.packed.utf8.count <= QRMatrix.maximumBytes }) else {
                    throw CLIError(
                        .malformedInput,
                        t(
                            "your card's smallest code (%1$@, %2$@ bytes) is larger than one QR code holds (%3$@): share fewer fields (--fields name,company), or use frames (--frames)",
                            candidates[0].format.rawValue, String(candidates[0].packed.utf8.count), String(QRMatrix.maximumBytes)))
                }
                let one = try QRFrames.plan(best.payload)[0]
                if let reason = why(best.format), out != nil || text { Console.err(reason) }
                if text {
                    Console.out(one)
                    return
                }
                let code = try QRMatrix.encode(Array(one.utf8))
                if let out {
                    let bytes = out.hasSuffix(".svg") ? Array(code.svg().utf8) : try code.png()
                    try PrivateFiles.write(SecureBytes(bytes), to: out, mode: PrivateFiles.modeFollowingUmask(), replace: true)
                    Console.err(t("Wrote %1$@", out))
                    return
                }
                try await Self.show([code], ansi: false, caption: Self.caption(mine.name, best.format, until), note: why(best.format))
                return
            }
            let allowed: [QRMatrix.Glyphs] = glyphs == "auto" ? [.halfBlocks, .sextants] : [QRMatrix.Glyphs(rawValue: glyphs) ?? .halfBlocks]
            for c in candidates {
                let text = [Self.caption(mine.name, c.format, until), why(c.format)].compactMap { $0 }
                // As it is when it fits the window, else compressed.
                for one in c.packed == c.payload ? [c.payload] : [c.payload, c.packed] {
                    if let layout = Layout.fitting(bytes: one.utf8.count, text: text, glyphs: allowed, window: window) {
                        try layout.draw(try QRMatrix.encode(Array(one.utf8)), window: window)
                        return
                    }
                }
            }
            // No card code fits this window. A running node can invite instead: a small code that brings the whole card.
            if let node = RunningNode.link(global) {
                let invitation = try await Invite.made(by: node, ttl: 300, uses: 1)
                let text = [
                    t.plural(
                        "Invitation to exchange with %1$@: %2$@ use until %3$@", "Invitation to exchange with %1$@: %2$@ uses until %3$@", count: 1,
                        invitation.who, "1", Self.minutes(invitation.expires)),
                    t(
                        "Your card needs a larger window; this brings all of it: scan it with nearcard exchange --invite-image PHOTO (--frames shows the card in frames)"
                    ),
                ]
                if let layout = Layout.fitting(bytes: invitation.text.utf8.count, text: text, glyphs: allowed, window: window) {
                    try layout.draw(try QRMatrix.encode(Array(invitation.text.utf8)), window: window)
                    return
                }
            }
            let smallest = candidates[0]
            let side = QRMatrix.side(forBytes: smallest.packed.utf8.count) ?? 177
            let need = allowed.last!.characters(side: side)
            let sizes = [
                smallest.format.rawValue, String(smallest.packed.utf8.count), String(need.columns + 2 + Layout.wordsBeside), String(need.lines + 1),
                String(window.columns), String(window.rows),
            ]
            throw CLIError(
                .environment,
                RunningNode.link(global) == nil
                    ? t(
                        "your card's smallest code (%1$@, %2$@ bytes) needs a window of at least %3$@×%4$@ (this one is %5$@×%6$@): make it larger, or write it with --out card.png, or show it in frames with --frames; with your node listening (nearcard listen) a small invitation code is shown instead",
                        sizes[0], sizes[1], sizes[2], sizes[3], sizes[4], sizes[5])
                    : t(
                        "your card's smallest code (%1$@, %2$@ bytes) needs a window of at least %3$@×%4$@ (this one is %5$@×%6$@): make it larger, or write it with --out card.png, or show it in frames with --frames",
                        sizes[0], sizes[1], sizes[2], sizes[3], sizes[4], sizes[5])
            )
        }

        /// Under or beside the code: whose card, which format, until when.
        static func caption(_ name: String, _ format: Format, _ until: Date) -> String {
            t("%1$@ · %2$@ · until %3$@", name, format.rawValue, minutes(until))
        }

        /// How one code and its words take a window: the words beside the code when there is room to the
        /// right (a code is about as wide as it is tall, and windows are wider), else under it.
        struct Layout {
            let glyphs: QRMatrix.Glyphs
            let beside: Bool
            let lines: [String]

            /// The columns the words beside a code need at least, past the two that separate them from it.
            static let wordsBeside = 30

            /// The first way (of `glyphs`, in order; beside before under) that one code of `bytes` and
            /// `text` fit `window`, leaving a line for the shell's next prompt. Sextants add a line saying so.
            static func fitting(bytes: Int, text: [String], glyphs: [QRMatrix.Glyphs], window: (columns: Int, rows: Int)) -> Layout? {
                guard let side = QRMatrix.side(forBytes: bytes) else { return nil }
                for g in glyphs {
                    let size = g.characters(side: side)
                    let words = text + (g == .sextants ? [t("(sextant characters, to fit; gaps or boxes? --out card.png)")] : [])
                    let room = window.columns - size.columns - 2
                    if size.lines <= window.rows - 1, room >= wordsBeside {
                        let wrapped = words.flatMap { Console.wrap($0, width: room) }
                        if wrapped.count <= size.lines { return Layout(glyphs: g, beside: true, lines: wrapped) }
                    }
                    let under = words.flatMap { Console.wrap($0, width: window.columns) }
                    if size.columns <= window.columns, size.lines + under.count <= window.rows - 1 { return Layout(glyphs: g, beside: false, lines: under) }
                }
                return nil
            }

            func draw(_ code: QRMatrix, window: (columns: Int, rows: Int)) throws {
                let rows = code.terminalText(ansi: true, glyphs: glyphs).split(separator: "\n", omittingEmptySubsequences: false).dropLast()
                if beside {
                    // The words start a little below the top, level with the code's first modules.
                    let start = max(0, min(1, rows.count - lines.count))
                    var out = ""
                    for (i, row) in rows.enumerated() {
                        let j = i - start
                        out += row + (j >= 0 && j < lines.count ? "  " + lines[j] : "") + "\n"
                    }
                    Console.write(STDOUT_FILENO, out)
                } else {
                    Console.write(STDOUT_FILENO, rows.joined(separator: "\n") + "\n")
                    for l in lines { Console.out(l) }
                }
            }
        }

        /// `--frames`: the card compressed, then split into frames that each fit (the window's, or the
        /// largest code), shown one after another in the terminal, written FILE-1.png…, or one per line.
        func showFrames(_ format: Format, _ payload: String, name: String, until: Date, window: (columns: Int, rows: Int)?) async throws {
            var capacity = QRMatrix.maximumBytes
            var drawing = QRMatrix.Glyphs(rawValue: glyphs) ?? .halfBlocks
            // Short, so that it and a frame's number fit an 80-column line under the code.
            let caption = Self.caption(name, format, until)
            if let window {
                // Under the code: the caption (as long as a frame's), a note (sextants; Ctrl-C for frames),
                // the shell's next prompt; the caption as many lines as it wraps to.
                func wrapped(_ text: String) -> Int { max(1, (Console.width(text) + window.columns - 1) / window.columns) }
                func lines(_ g: QRMatrix.Glyphs) -> Int {
                    window.rows - 1 - wrapped(caption + Self.frameSuffix(99, of: 99)) - wrapped(Self.note(g, frames: true) ?? "")
                }
                func fits(_ g: QRMatrix.Glyphs) -> Int { QRMatrix.capacity(side: g.side(columns: window.columns, lines: lines(g))) }
                // Half blocks when the whole card fits one code drawn so; else sextants, which hold more.
                if glyphs == "auto" { drawing = payload.utf8.count <= fits(.halfBlocks) ? .halfBlocks : .sextants }
                capacity = fits(drawing)
                if payload.utf8.count > capacity, capacity < QRFrames.minimumCapacity {
                    let need = QRMatrix.side(forBytes: QRFrames.minimumCapacity) ?? 57
                    let size = drawing.characters(side: need)
                    throw CLIError(
                        .environment,
                        t(
                            "this terminal (%1$@×%2$@) is too small to draw the code: make it at least %3$@×%4$@, or write an image with --out card.png, or share fewer fields (--fields name,company)",
                            String(window.columns), String(window.rows), String(size.columns), String(size.lines + window.rows - lines(drawing))))
                }
            }
            let frames = try QRFrames.plan(payload, capacity: capacity)
            if text {
                for f in frames { Console.out(f) }
                return
            }
            let codes = try frames.map { try QRMatrix.encode(Array($0.utf8)) }
            if let out {
                for (i, code) in codes.enumerated() {
                    let path = codes.count == 1 ? out : Self.numbered(out, i + 1)
                    let bytes = out.hasSuffix(".svg") ? Array(code.svg().utf8) : try code.png()
                    try PrivateFiles.write(SecureBytes(bytes), to: path, mode: PrivateFiles.modeFollowingUmask(), replace: true)
                    Console.err(t("Wrote %1$@", path))
                }
                return
            }
            // Sextants are said under the code: a font without them shows gaps or boxes.
            try await Self.show(
                codes, ansi: Console.stdoutIsTerminal, glyphs: drawing, caption: caption, note: Self.note(drawing, frames: codes.count > 1))
        }

        /// The line under the caption: that the code is drawn with sextants (a font without them shows
        /// gaps or boxes), and how frames shown one after another stop.
        static func note(_ glyphs: QRMatrix.Glyphs, frames: Bool) -> String? {
            let stop = frames ? t("Ctrl-C stops") : nil
            guard glyphs == .sextants else { return stop }
            return t("(sextant characters, to fit; gaps or boxes? --out card.png)") + (stop.map { " · " + $0 } ?? "")
        }

        /// After the caption of frame `n` of `count`.
        static func frameSuffix(_ n: Int, of count: Int) -> String { t(" · frame %1$@ of %2$@", String(n), String(count)) }

        /// "2026-11-28 17:23Z": a code's end to the minute.
        static func minutes(_ date: Date) -> String {
            let iso = ISO8601.string(date)
            return iso.prefix(10) + " " + iso.dropFirst(11).prefix(5) + "Z"
        }

        static func numbered(_ path: String, _ n: Int) -> String {
            let dot = path.lastIndex(of: ".")!
            return String(path[..<dot]) + "-\(n)" + String(path[dot...])
        }

        /// One code, or the frames of a chunked payload one after another (until Ctrl-C on a terminal).
        static func show(_ codes: [QRMatrix], ansi: Bool, glyphs: QRMatrix.Glyphs = .halfBlocks, caption: String, note: String? = nil) async throws {
            if codes.count == 1 || !ansi {
                for (i, c) in codes.enumerated() {
                    Console.write(STDOUT_FILENO, c.terminalText(ansi: ansi, glyphs: glyphs))
                    Console.out(codes.count == 1 ? caption : caption + frameSuffix(i + 1, of: codes.count))
                    if let note { Console.out(note) }
                }
                return
            }
            // Frames one after another until Ctrl-C.
            let interrupted = NodeSetup.interrupts()
            let showing = Task {
                var i = 0
                while !Task.isCancelled {
                    Console.write(STDOUT_FILENO, "\u{1B}[H\u{1B}[2J" + codes[i % codes.count].terminalText(ansi: true, glyphs: glyphs))
                    Console.out(caption + frameSuffix(i % codes.count + 1, of: codes.count))
                    if let note { Console.out(note) }
                    try? await Task.sleep(nanoseconds: 800_000_000)
                    i += 1
                }
            }
            for await _ in interrupted { break }
            showing.cancel()
            await showing.value
        }
    }

    struct Invite: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "invite",
            abstract: t("Show an invitation to exchange cards with you, for networks that drop multicast."),
            discussion: t(
                """
                The code holds your node's addresses and port, your fingerprint, and a one-time secret. \
                Whoever scans it runs `nearcard exchange --invite-image PHOTO` (or --invite TEXT) and \
                reaches your node directly, with no discovery; your node must prove the key the code names \
                and their node must prove it holds the secret, so no check code needs comparing. Showing \
                it is your consent for --uses exchanges until it expires. Your node must be listening \
                (`nearcard listen` or `nearcard ui`) on --port.
                """))
        @OptionGroup var global: GlobalOptions
        @Option(help: ArgumentHelp(t("How long it is valid: 30s, 5m, 1h (at most 365d)."), valueName: "DURATION")) var ttl: String = "5m"
        @Option(parsing: .unconditional, help: ArgumentHelp(t("How many exchanges it admits."))) var uses: Int = 1
        @Option(parsing: .unconditional, help: ArgumentHelp(t("The port your node listens on (default: the running node's, else 7447)."))) var port: Int?
        @Option(help: ArgumentHelp(t("Write FILE.png or FILE.svg instead of drawing in the terminal."), valueName: "FILE")) var out: String?
        @Flag(help: ArgumentHelp(t("Print the invitation's text."))) var text = false

        func validate() throws {
            _ = try Durations.parse(ttl)
            if uses < 1 || uses > 1000 { throw ValidationError(t("--uses must be between 1 and 1000")) }
            if let port, !(1...65535).contains(port) { throw ValidationError(t("--port must be 1…65535")) }
            if let out, !(out.hasSuffix(".png") || out.hasSuffix(".svg")) { throw ValidationError(t("--out must end in .png or .svg")) }
        }

        func run() async throws {
            let invitation: Made
            if let node = RunningNode.link(global) {
                // The running node makes it, naming the port it listens on.
                invitation = try await Self.made(by: node, ttl: try Durations.parse(ttl), uses: uses)
                if let port, port != invitation.port {
                    Console.err(
                        "nearcard: "
                            + t(
                                "the node running on this home listens on port %1$@, not %2$@: the invitation names %1$@", String(invitation.port), String(port)
                            ))
                }
            } else {
                let port = port ?? NearcardNode.defaultPort
                let context = try NodeSetup.context(global, consent: DeclineAll(reason: "not listening"))
                let made = try NodeRuntime.open(context).invite(ttl: try Durations.parse(ttl), uses: uses, port: port)
                invitation = Made(text: made.text, expires: made.expires, who: made.name ?? made.fingerprint, port: port)
                if !(await Reachability.answers(host: "127.0.0.1", port: port)) {
                    Console.err(
                        "nearcard: "
                            + t(
                                "nothing listens on port %1$@ here yet: start `nearcard listen --port %1$@` (or `nearcard ui`) for the invitation to be answered",
                                String(port)))
                }
            }
            let until = ISO8601.string(invitation.expires)
            if text {
                Console.out(invitation.text)
                return
            }
            let code = try QRMatrix.encode(Array(invitation.text.utf8))
            if let out {
                let bytes = out.hasSuffix(".svg") ? Array(code.svg().utf8) : try code.png()
                try PrivateFiles.write(SecureBytes(bytes), to: out, mode: 0o600, replace: true)
                Console.err(t("Wrote %1$@ (it holds a secret: share it only by showing it)", out))
                return
            }
            try await Make.show(
                [code], ansi: Console.stdoutIsTerminal,
                caption: t.plural(
                    "Invitation to exchange with %1$@: %2$@ use until %3$@", "Invitation to exchange with %1$@: %2$@ uses until %3$@", count: uses,
                    invitation.who, String(uses), until))
        }

        /// An invitation as a face shows it.
        struct Made {
            let text: String
            let expires: Date
            /// The name it carries, else the fingerprint.
            let who: String
            let port: Int
        }

        /// An invitation made by the node running on the home (`invite` on its control socket).
        static func made(by node: NodeLink, ttl: TimeInterval, uses: Int) async throws -> Made {
            let reply = try await RunningNode.call(node, ["cmd": "invite", "ttl": .number(ttl), "uses": .number(Double(uses))])
            try RunningNode.check(reply)
            let i = reply["invitation"]
            guard let text = i?["text"]?.stringValue, let expires = i?["expires"]?.stringValue.flatMap({ ISO8601.date($0) }),
                let port = i?["port"]?.integerValue
            else { throw CLIError(.software, t("the running node's invitation was incomplete")) }
            return Made(text: text, expires: expires, who: i?["name"]?.stringValue ?? i?["fingerprint"]?.stringValue ?? "", port: Int(port))
        }
    }

    struct Scan: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "scan",
            abstract: t("Read QR codes (text, images, or - for lines on stdin) and keep what they carry."),
            discussion: t(
                """
                Routes each code: chunk frames (collected until complete), OpenID requests (nothing stored; \
                answer with `nearcard present`), credentials (imported), cards (stored as contacts, source \
                qrCode: plaintext → unverified; did-signed and zk → verified when the signature checks and \
                the signer is trusted (met in person, or `trust add`), unverified ("signature valid, signer \
                unknown") otherwise, failed when a check fails). A card from someone already in your \
                contacts is merged into that contact, and the scan says what changed. Exit 0 stored or \
                shown, 1 a check failed or expired, 2 unreadable or unusable.
                """))

        @OptionGroup var global: GlobalOptions
        @Argument(help: ArgumentHelp(t("QR texts; - reads one per line from stdin."))) var texts: [String] = []
        @Option(name: .customLong("image"), help: ArgumentHelp(t("A PNG or JPEG image to scan (a photo of a code works); repeatable."), valueName: "FILE"))
        var images: [String] = []
        @Flag(help: ArgumentHelp(t("Print what was found as JSON."))) var json = false

        func validate() throws {
            if texts.isEmpty && images.isEmpty { throw ValidationError(t("give QR text, - for stdin, or --image FILE")) }
        }

        func run() async throws {
            // Each code, or why an image gave none: one image that cannot be read does not lose the others' codes.
            var inputs: [Result<String, CLIError>] = []
            for text in texts {
                if text == "-" {
                    let data = try Console.readStdin(limit: Chunks.maximumTotal * 2, what: "QR text")
                    let lines = String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline).map(String.init)
                        .filter { !$0.allSatisfy(\.isWhitespace) }
                    if lines.isEmpty { throw CLIError(.malformedInput, t("no QR text on standard input (one code per line)")) }
                    inputs += lines.map { .success($0) }
                } else {
                    inputs.append(.success(text))
                }
            }
            for path in images {
                do { inputs += try Self.codes(inImage: path).map { .success($0) } } catch let e as CLIError { inputs.append(.failure(e)) }
            }
            var session = ScanSession(book: try global.database(), ownDID: try? global.identity().did)
            var reports: [JSONValue] = []
            var worst = ScanSession.Severity.ok
            var failed: [String] = []
            for input in inputs {
                let (report, severity): (JSONValue, ScanSession.Severity)
                switch input {
                case .success(let text): (report, severity) = try session.scan(text)
                case .failure(let e): (report, severity) = ScanSession.malformed(e.message)
                }
                reports.append(report)
                if report["result"] == "error" { failed.append(Self.said(report)) }
                worst = max(worst, severity)
            }
            // One code: its error is the command's one line. Several: a line for each that failed, then the count.
            if !json && inputs.count > 1 {
                for (n, report) in reports.enumerated() where report["result"] == "error" {
                    Console.err("nearcard: " + t("code %1$@: %2$@", String(n + 1), Self.said(report)))
                }
            }
            if json { Console.json(.array(reports.map(Self.withoutPhrase))) } else { Self.print(reports) }
            let summary =
                inputs.count == 1
                ? failed.first
                : t.plural(
                    "%1$@ of %2$@ codes could not be used", "%1$@ of %2$@ codes could not be used", count: inputs.count, String(failed.count),
                    String(inputs.count))
            // An image this machine could not scan (zbar missing): the machine's to fix, exit 4.
            for case .failure(let e) in inputs where e.code == .environment { throw CLIError(.environment, summary ?? e.message) }
            switch worst {
            case .ok: break
            case .checkFailed: throw CLIError(.checkFailed, summary ?? t("a scanned code failed its checks"))
            case .unusable: throw CLIError(.malformedInput, summary ?? t("a scanned code could not be used"))
            }
        }

        /// A failed report's message in the person's language (its phrase), else as the report says it.
        static func said(_ report: JSONValue) -> String {
            report["phrase"].flatMap(Phrase.init(json:)).map(t.say) ?? report["message"]?.stringValue ?? ""
        }

        /// A report as `--json` prints it: the message in English, without the phrase it was said from.
        static func withoutPhrase(_ report: JSONValue) -> JSONValue {
            guard var o = report.objectValue else { return report }
            o["phrase"] = nil
            return .object(o)
        }

        static func print(_ reports: [JSONValue]) {
            for r in reports {
                switch r["result"]?.stringValue {
                case "contact":
                    let what = "\(r["name"]?.stringValue ?? "") (\(r["format"]?.stringValue ?? ""), \(r["verificationStatus"]?.stringValue ?? ""))"
                    let summary = r["summary"]?.stringValue ?? ""
                    if summary == "added" {
                        Console.out(t("Stored %1$@ as a contact: %2$@", what, r["reason"]?.stringValue ?? ""))
                    } else {
                        Console.out("\(what): \(summary). \(r["reason"]?.stringValue ?? "")")
                    }
                case "credentials":
                    for c in r["credentials"]?.arrayValue ?? [] {
                        Console.out(
                            t(
                                "Imported credential %1$@ from %2$@ (%3$@): %4$@", c["id"]?.stringValue ?? "", c["issuer"]?.stringValue ?? "",
                                c["status"]?.stringValue ?? "", c["reason"]?.stringValue ?? ""))
                    }
                case "own-card":
                    Console.out(t("This is your own card (%1$@): nothing was stored.", r["name"]?.stringValue ?? ""))
                case "invitation":
                    Console.out(
                        t(
                            "An invitation to exchange cards with %1$@, valid until %2$@. Nothing was stored.",
                            r["name"]?.stringValue ?? r["fingerprint"]?.stringValue ?? t("someone"), r["expires"]?.stringValue ?? "?"))
                    Console.out(t("Use it with: nearcard exchange --invite 'TEXT' (or --invite-image PHOTO)"))
                case "presentation-request":
                    Console.out(
                        t(
                            "A presentation request from %1$@ asking for: %2$@.", r["verifier"]?.stringValue ?? "",
                            (r["claims"]?.arrayValue ?? []).compactMap(\.stringValue).joined(separator: ", ").ifEmpty(t("(nothing specific)"))))
                    Console.out(t("Nothing was stored. Answer it with: nearcard present 'REQUEST'"))
                case "partial":
                    Console.out(
                        t(
                            "Chunked code: %1$@ of %2$@ frames (missing: %3$@). Nothing was stored: give every frame to one qr scan (texts, or - with one per line, or --image for each photo).",
                            String(r["received"]?.integerValue ?? 0), String(r["total"]?.integerValue ?? 0), r["missingText"]?.stringValue ?? ""))
                default:
                    break
                }
            }
        }
    }
}

extension String {
    func ifEmpty(_ other: String) -> String { isEmpty ? other : self }
}

extension QR.Scan {
    /// The texts of the QR codes in the image file at `path` (PNG or JPEG); a file that cannot be read
    /// or decoded is a one-line error naming it and why (exit 2); zbar missing, or failing, exit 4.
    static func codes(inImage path: String) throws -> [String] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw CLIError(.malformedInput, "cannot read the image \(path): \(PrivateFiles.unreadable(path))")
        }
        do { return try ScanSession.texts(inImage: [UInt8](data)) } catch {
            throw CLIError(error.kind == .library ? .environment : .malformedInput, "\(path): " + t.say(error.phrase))
        }
    }
}

/// "30m", "24h", "7d", "3600" → seconds.
enum Durations {
    static func parse(_ text: String) throws -> TimeInterval {
        let units: [Character: Double] = ["s": 1, "m": 60, "h": 3600, "d": 86400]
        var number = text
        var unit = 1.0
        if let last = text.last, let u = units[last] {
            unit = u
            number = String(text.dropLast())
        }
        guard let n = Double(number), n.isFinite else {
            throw ValidationError(t("\"%1$@\" is not a duration like 30s, 30m, 24h or 7d", text))
        }
        guard n > 0, n * unit <= 365 * 86400 else {
            throw ValidationError(t("\"%1$@\": a duration must be more than 0 and at most 365d", text))
        }
        return n * unit
    }
}
