public import NearcardCrypto
public import NearcardModel
import NearcardStore

/// What a face gives to run a node on a home: the identity (its keys go in here and are never read
/// back out), the book, how incoming requests are decided, events, limits and a bot's policy. Built
/// once per process; `NodeRuntime.open` or `start` runs it. What the node holds and changes while it
/// runs (its name, presence key, route hints) stays inside the node.
public struct NodeConfiguration: Sendable {
    package let context: NodeContext

    /// `nodeName`: this node's name in the store's exchange log (which bot of a fleet recorded an
    /// exchange). `requiredFields`: what a peer's card must disclose (a bot policy's `requireFields`).
    /// `webhook`: where each completed exchange is posted.
    public init(
        keys: IdentityKeys, identity: PublicIdentity, book: Book, consent: any ConsentProvider,
        events: EventBus = EventBus(), limits: NodeLimits = NodeLimits(), requiredFields: Set<CardField> = [], nodeName: String = "",
        webhook: Webhook? = nil
    ) {
        context = NodeContext(
            keys: keys, identity: identity, database: book.database, consent: consent, events: events, limits: limits,
            requiredFields: requiredFields, nodeName: nodeName, webhook: webhook)
    }

    /// Who this home is.
    public var identity: PublicIdentity { context.identity }
    /// Where the node's events go (subscribe before the node starts to miss none).
    public var events: EventBus { context.events }
    /// The node's limits (timeouts, caps).
    public var limits: NodeLimits { context.limits }
    /// The book the node keeps.
    public var book: Book { Book(context.database) }
}
