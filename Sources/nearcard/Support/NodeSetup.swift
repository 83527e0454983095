import Foundation
import NearcardCrypto
import NearcardDiscovery
import NearcardModel
import NearcardNode
import NearcardProtocol
import NearcardStore
#if canImport(Glibc)
import Glibc
#endif

/// Shared set-up of the LAN commands: identity, database, discovery, and how outcomes are shown.
enum NodeSetup {
    static func service(_ global: GlobalOptions, consent: ConsentProvider, events: EventBus = EventBus()) throws -> ExchangeService {
        let store = global.identityStore
        let identity = try store.loadPublic()
        let keys = try global.unlockIdentity()
        let database = try global.database()
        return ExchangeService(keys: keys, identity: identity, database: database, consent: consent, events: events)
    }

    static func discovery() throws -> AvahiDiscovery {
        do { return try AvahiDiscovery() } catch {
            throw CLIError(.environment, error.message)
        }
    }

    /// Exit code and one line for a failed exchange.
    static func failure(_ error: ProtocolError) -> CLIError {
        switch error.code {
        case .declined, .consentTimeout, .badCard, .badIdentity, .identityMismatch, .badCommitment, .protocolError, .decryptFailed,
             .tooLarge, .unsupportedVersion:
            return CLIError(.checkFailed, "exchange failed (\(error.code.rawValue)): \(error.message); nothing was stored")
        case .timeout, .connectionLost, .busy:
            return CLIError(.environment, "exchange failed (\(error.code.rawValue)): \(error.message); nothing was stored")
        case .internalError:
            return CLIError(.software, "exchange failed: \(error.message)")
        }
    }

    /// Reads an allowlist: one DID per line; blank lines and # comments ignored.
    static func allowlist(_ path: String) throws -> Set<String> {
        guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8) else {
            throw CLIError(.malformedInput, "cannot read the allowlist \(path)")
        }
        var dids = Set<String>()
        for (n, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)[0].trimmingCharacters(in: .whitespaces)
            if line.isEmpty { continue }
            do { _ = try DIDKey(parsing: line) } catch {
                throw CLIError(.malformedInput, "\(path) line \(n + 1): \(error.message)")
            }
            dids.insert(line)
        }
        return dids
    }

    /// Waits for SIGINT or SIGTERM (Ctrl-C), without killing the process.
    static func interrupts() -> AsyncStream<Int32> {
        let (stream, continuation) = AsyncStream.makeStream(of: Int32.self)
        for sig in [SIGINT, SIGTERM] {
            signal(sig, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: sig, queue: .main)
            source.setEventHandler { continuation.yield(sig) }
            source.resume()
            signalSources.append(source)
        }
        return stream
    }

    nonisolated(unsafe) static var signalSources: [DispatchSourceSignal] = []
}

/// How a contact from an exchange is shown.
enum ExchangeDisplay {
    static func completed(_ contact: Contact, myMessage: String?, theirMessage: String?, database: NearcardDatabase) {
        Console.out("✔ Exchanged cards with \(contact.name) — contact \(contact.id.prefix(8)) (\(contact.verificationStatus.rawValue))")
        ContactDisplay.show(contact, database: database)
    }
}
