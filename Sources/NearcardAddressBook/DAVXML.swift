import Foundation

#if canImport(FoundationXML)
    import FoundationXML
#endif

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

    /// Parses a document; nil when it is not well-formed XML.
    static func parse(_ data: [UInt8]) -> DAVElement? {
        guard data.count <= maximumLength else { return nil }
        let parser = XMLParser(data: Data(data))
        parser.shouldProcessNamespaces = true
        parser.shouldResolveExternalEntities = false
        let builder = Builder()
        parser.delegate = builder
        guard parser.parse(), let root = builder.root else { return nil }
        return root
    }

    private final class Builder: NSObject, XMLParserDelegate {
        var stack: [DAVElement] = []
        var root: DAVElement?

        func parser(
            _ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?, qualifiedName qName: String?,
            attributes attributeDict: [String: String] = [:]
        ) {
            stack.append(DAVElement(namespace: namespaceURI ?? "", name: elementName))
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) {
            guard !stack.isEmpty else { return }
            stack[stack.count - 1].text += string
        }

        func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName qName: String?) {
            guard let done = stack.popLast() else { return }
            if stack.isEmpty { root = done } else { stack[stack.count - 1].children.append(done) }
        }
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
    static func multistatus(_ body: [UInt8]) -> [DAVResponse]? {
        guard let root = DAVElement.parse(body), root.namespace == DAVElement.dav, root.name == "multistatus" else { return nil }
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
