internal import CXML
import Foundation

/// WebDAV's XML (RFC 4918 §14), read with a real XML parser: an element tree with namespaces, and the
/// multistatus answers CardDAV discovery and listing use. Request bodies are written from fixed
/// templates whose only variables are escaped (`escape`).
struct DAVElement: Sendable {
    var namespace: String
    var name: String
    var text: String = ""
    var children: [DAVElement] = []

    static let dav = "DAV:"
    static let carddav = "urn:ietf:params:xml:ns:carddav"

    func child(_ namespace: String, _ name: String) -> DAVElement? { children.first { $0.namespace == namespace && $0.name == name } }
    func all(_ namespace: String, _ name: String) -> [DAVElement] { children.filter { $0.namespace == namespace && $0.name == name } }
    /// The trimmed text of `<href>` children.
    var hrefs: [String] { all(Self.dav, "href").map { $0.text.trimmingCharacters(in: .whitespacesAndNewlines) } }

    /// The largest XML answer read.
    static let maximumLength = 16 << 20

    /// Parses a document; nil when it is not well-formed XML. Throws when libxml2 cannot be loaded.
    static func parse(_ data: [UInt8]) throws(AddressBookError) -> DAVElement? {
        guard !data.isEmpty, data.count <= maximumLength else { return nil }
        let builder = Builder()
        var events = nearcard_xml_events(
            start: { context, ns, name in
                let b = Unmanaged<Builder>.fromOpaque(context!).takeUnretainedValue()
                b.stack.append(DAVElement(namespace: ns.map { String(cString: $0) } ?? "", name: String(cString: name)))
            },
            text: { context, bytes, length in
                let b = Unmanaged<Builder>.fromOpaque(context!).takeUnretainedValue()
                guard !b.stack.isEmpty else { return }
                b.stack[b.stack.count - 1].text += String(decoding: UnsafeBufferPointer(start: bytes, count: Int(length)), as: UTF8.self)
            },
            end: { context in
                let b = Unmanaged<Builder>.fromOpaque(context!).takeUnretainedValue()
                guard let done = b.stack.popLast() else { return }
                if b.stack.isEmpty { b.root = done } else { b.stack[b.stack.count - 1].children.append(done) }
            })
        var reason = [CChar](repeating: 0, count: 256)
        let result = withExtendedLifetime(builder) {
            data.withUnsafeBufferPointer { buffer in
                // Not empty (above): the buffer has a base address.
                nearcard_xml_parse(buffer.baseAddress!, buffer.count, &events, Unmanaged.passUnretained(builder).toOpaque(), &reason, reason.count)
            }
        }
        switch result {
        case NEARCARD_XML_WELL_FORMED: return builder.root
        case NEARCARD_XML_NO_LIBRARY:
            let why = String(decoding: reason.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            throw AddressBookError(.library, Phrase("cannot load libxml2 to read the server's answers (%1$@); install it: apt install libxml2", why))
        default: return nil
        }
    }

    /// The element tree as the parser reports it: open elements on a stack, the root once closed.
    private final class Builder {
        var stack: [DAVElement] = []
        var root: DAVElement?
    }

    static func escape(_ s: String) -> String {
        s.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
            .replacingOccurrences(of: "\"", with: "&quot;")
    }
}

/// One `<response>` of a 207 Multi-Status: the resource's href and the properties found (status 200).
struct DAVResponse: Sendable {
    var href: String
    /// Properties with a 2xx propstat, by "namespace name".
    var properties: [String: DAVElement]

    func property(_ namespace: String, _ name: String) -> DAVElement? { properties[namespace + " " + name] }

    /// The responses of a multistatus document; nil when the body is not one.
    static func multistatus(_ body: [UInt8]) throws(AddressBookError) -> [DAVResponse]? {
        guard let root = try DAVElement.parse(body), root.namespace == DAVElement.dav, root.name == "multistatus" else { return nil }
        return root.all(DAVElement.dav, "response").compactMap { r in
            guard let href = r.hrefs.first else { return nil }
            var props: [String: DAVElement] = [:]
            for stat in r.all(DAVElement.dav, "propstat") {
                let status = stat.child(DAVElement.dav, "status")?.text ?? ""
                // "HTTP/1.1 200 OK": only found properties count.
                guard status.split(separator: " ").dropFirst().first.map({ $0.hasPrefix("2") }) ?? false else { continue }
                for prop in stat.all(DAVElement.dav, "prop") {
                    for p in prop.children { props[p.namespace + " " + p.name] = p }
                }
            }
            return DAVResponse(href: href, properties: props)
        }
    }
}
