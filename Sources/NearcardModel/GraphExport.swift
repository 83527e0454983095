public import Foundation
public import NearcardCrypto

/// The iOS app's social-graph export:
/// `{"version":1,"exported_at":ISO8601,"edges":[{"id","name","verification","exchange_timestamp",
///   "graph_edge_id","my_signature","their_signature","my_message","their_message"}]}`.
public enum GraphExport {
    public static func json(contacts: [Contact], exportedAt: Date) -> JSONValue {
        func opt(_ s: String?) -> JSONValue { s.map { .string($0) } ?? .null }
        let edges: [JSONValue] = contacts.map { c in
            var o = JSONObject()
            o["id"] = .string(c.id)
            o["name"] = .string(c.name)
            o["verification"] = .string(c.verificationStatus.rawValue)
            o["exchange_timestamp"] = c.exchangeTimestamp.map { .string(ISO8601.string($0)) } ?? .null
            o["graph_edge_id"] = opt(c.graphExportEdgeId)
            o["my_signature"] = opt(c.myExchangeSignature)
            o["their_signature"] = opt(c.exchangeSignature)
            o["my_message"] = opt(c.myEphemeralMessage)
            o["their_message"] = opt(c.theirEphemeralMessage)
            return .object(o)
        }
        return ["version": 1, "exported_at": .string(ISO8601.string(exportedAt)), "edges": .array(edges)]
    }
}
