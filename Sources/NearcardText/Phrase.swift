/// A sentence for people, made where something happens and put into words where it is shown: its English
/// template (a catalog's message id, with positional placeholders `%1$@`) and the values that fill it.
/// An error raised below the faces carries one, so that a terminal or a page can say it in the person's
/// language while logs, JSON lines and the wire say `english` (machine-read, docs/TRANSLATING.md).
///
/// A value is either text shown as it is (a name, a path, a number) or another phrase, said in the same
/// language (an error that wraps the one beneath it). scripts/po-extract.py collects each template
/// written `Phrase("…", …)`.
public struct Phrase: Sendable, Equatable, CustomStringConvertible {
    public let template: String
    public let arguments: [Phrase]
    /// Text shown as it is, never looked up (a value, or a message made before phrases existed).
    public let isVerbatim: Bool

    public init(_ template: String, _ arguments: any PhraseArgument...) {
        self.template = template
        self.arguments = arguments.map(\.phrase)
        self.isVerbatim = false
    }

    /// A phrase read back (from JSON): its template and values, each a phrase.
    public init(_ template: String, arguments: [Phrase]) {
        self.template = template
        self.arguments = arguments
        self.isVerbatim = false
    }

    /// Text shown as it is in every language.
    public init(verbatim text: String) {
        self.template = text
        self.arguments = []
        self.isVerbatim = true
    }

    /// The phrase in English, the source language: what logs, JSON and the wire say.
    public var english: String { said(by: .english) }

    public var description: String { english }

    /// The phrase in `translator`'s language (English where its catalog lacks the template).
    public func said(by translator: Translator) -> String {
        isVerbatim ? template : translator.text(template, arguments: arguments.map { $0.said(by: translator) })
    }
}

/// What may fill a phrase's placeholder: text as it is, or a phrase.
public protocol PhraseArgument: Sendable {
    var phrase: Phrase { get }
}

extension String: PhraseArgument {
    public var phrase: Phrase { Phrase(verbatim: self) }
}

extension Substring: PhraseArgument {
    public var phrase: Phrase { Phrase(verbatim: String(self)) }
}

extension Phrase: PhraseArgument {
    public var phrase: Phrase { self }
}

extension Translator {
    /// `phrase` in this language.
    public func say(_ phrase: Phrase) -> String { phrase.said(by: self) }
}
