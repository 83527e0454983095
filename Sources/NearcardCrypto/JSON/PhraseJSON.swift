public import NearcardErrors

extension Phrase {
    /// A phrase as the control socket carries it beside its English (docs/JSONL.md), for a face that
    /// says it in the person's language: text shown as it is is a string; a phrase is
    /// `{"template": …, "arguments": [phrase, …]}`.
    public var json: JSONValue {
        isVerbatim ? .string(template) : ["template": .string(template), "arguments": .array(arguments.map(\.json))]
    }

    /// A phrase read back from `json`; nil when it is neither shape (or nests deeper than a sentence does).
    public init?(json: JSONValue) {
        self.init(json: json, depth: 0)
    }

    private init?(json: JSONValue, depth: Int) {
        if let text = json.stringValue {
            self.init(verbatim: text)
            return
        }
        guard depth < 8, let template = json["template"]?.stringValue, let values = json["arguments"]?.arrayValue else { return nil }
        var arguments: [Phrase] = []
        for value in values {
            guard let argument = Phrase(json: value, depth: depth + 1) else { return nil }
            arguments.append(argument)
        }
        self.init(template, arguments: arguments)
    }
}
