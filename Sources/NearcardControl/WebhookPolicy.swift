import Foundation
import NearcardCrypto
import NearcardNode

#if canImport(Glibc)
    import Glibc
#endif

extension Webhook {
    /// `{"url": …, "secret": …}` or `{"url": …, "secretFile": PATH}` (first line; the file must not be
    /// readable by group or others, like a key).
    static func parse(_ value: JSONValue, directory: String, fail: (String) -> BotPolicy.Failure) throws(BotPolicy.Failure) -> Webhook {
        guard let o = value.objectValue else { throw fail("\"webhook\" must be {\"url\": …, \"secret\" or \"secretFile\": …}") }
        if let extra = o.keys.sorted().first(where: { !["url", "secret", "secretFile"].contains($0) }) {
            throw fail("unknown member \"webhook.\(extra)\" (known: url, secret, secretFile)")
        }
        guard let url = o["url"]?.stringValue, let parts = URLComponents(string: url), let scheme = parts.scheme?.lowercased(),
            scheme == "http" || scheme == "https", let host = parts.host, !host.isEmpty
        else {
            throw fail("\"webhook.url\" must be an http:// or https:// URL")
        }
        if parts.user != nil || parts.password != nil {
            throw fail("\"webhook.url\" must not carry a user or password (the secret signs each delivery)")
        }
        var secret: [UInt8]
        switch (o["secret"], o["secretFile"]) {
        case (.string(let s)?, nil):
            secret = Array(s.utf8)
        case (nil, .string(let file)?):
            let path = file.hasPrefix("/") ? file : directory + "/" + file
            var st = stat()
            guard stat(path, &st) == 0, let data = FileManager.default.contents(atPath: path),
                let text = String(data: data, encoding: .utf8)
            else {
                throw fail("cannot read the webhook secret file \(path)")
            }
            if st.st_mode & 0o077 != 0 {
                throw fail("the webhook secret file \(path) is readable by others (mode \(String(st.st_mode & 0o777, radix: 8))); chmod 600 it")
            }
            secret = Array((text.split(separator: "\n", omittingEmptySubsequences: false).first.map(String.init) ?? "").utf8)
        default:
            throw fail("\"webhook\" needs exactly one of \"secret\" (a string) or \"secretFile\" (a path)")
        }
        while secret.last == UInt8(ascii: "\r") || secret.last == UInt8(ascii: " ") { secret.removeLast() }
        guard secret.count >= minimumSecretLength else {
            throw fail("the webhook secret must be at least \(minimumSecretLength) bytes (e.g. openssl rand -hex 32)")
        }
        return Webhook(url: url, secret: secret)
    }
}
