import NearcardCrypto
import NearcardModel
import NearcardProtocol

/// One follow-up message's delivery above its connection: runs the `MailboxStateMachine` and performs
/// what it asks — the recipient's checks and storing (`MailboxAuthority`, off the loop), events, and the
/// sender's result.
final class MailDriver: SessionDriver {
    private var machine: MailboxStateMachine
    private let remote: String
    private weak var connection: (any SessionConnection)?
    /// Sender: where the result goes. Recipient: nil.
    private let result: (@Sendable (Result<Bool, ProtocolError>) -> Void)?
    /// Recipient: who checks and stores, and where arrivals are told.
    private let authority: MailboxAuthority?
    private let events: EventBus?
    private var reported = false
    /// Recipient: the listener's admission of this connection, and whether the sender's first transport
    /// message came (a message 1 followed by silence is a probe, not a refused message: §14).
    private let admitted: AdmittedConnection?
    private var heard = false

    /// The sender.
    init(
        sending machine: MailboxStateMachine, remote: String, result: @escaping @Sendable (Result<Bool, ProtocolError>) -> Void,
        connection: any SessionConnection
    ) {
        self.machine = machine
        self.remote = remote
        self.result = result
        self.authority = nil
        self.events = nil
        self.admitted = nil
        self.connection = connection
    }

    /// The recipient, after the dispatcher read message 1.
    init(
        receivingAfter noise: NoiseIKHandshake, authority: MailboxAuthority, events: EventBus, remote: String, admitted: AdmittedConnection? = nil,
        connection: any SessionConnection
    ) {
        self.machine = MailboxStateMachine(receivingAfter: noise)
        self.admitted = admitted
        self.remote = remote
        self.result = nil
        self.authority = authority
        self.events = events
        self.connection = connection
    }

    var isFinished: Bool { machine.isFinished }

    func start() { perform(machine.start()) }

    func received(_ frame: [UInt8]) {
        let actions = machine.receive(frame)
        if result == nil && !heard && !machine.isFinished {
            heard = true
            admitted?.identified()
        }
        perform(actions)
    }

    func timerFired(_ timer: SessionTimer, after seconds: Int) { perform(machine.timerFired(timer, after: seconds)) }

    func failed(_ error: ProtocolError) { perform(machine.abort(error)) }

    func closed(heardFromPeer: Bool, after seconds: Double) {
        guard !machine.isFinished, !reported else { return }
        // A node that cannot open message 1 (sealed to the contact's key: §15) closes without a word.
        let lost =
            machine.role == .initiator && !heardFromPeer
            ? ProtocolError(.connectionLost, "the node there closed without answering: not the contact (it cannot open a message sealed to their key), or busy")
            : ProtocolError(.connectionLost, "the connection closed during the delivery")
        perform(machine.abort(lost))
    }

    private func perform(_ actions: [MailboxStateMachine.Action]) {
        guard let connection else { return }
        for action in actions {
            switch action {
            case .send(let bytes):
                connection.write(bytes)
            case .arm(let timer):
                connection.arm(timer)
            case .authorize(let delivery):
                authorize(delivery)
            case .delivered(_, let duplicate):
                connection.flush()
                finish(.success(duplicate))
                connection.close()
            case .answered(_, let held):
                connection.flush()
                finish(.success(held))
                connection.close()
            case .answerQuery(let edge, let senderStatic):
                answer(edge, senderStatic: senderStatic)
            case .failed(let error, let byPeer):
                connection.flush()
                finish(.failure(error), byPeer: byPeer)
                connection.close()
            }
        }
        connection.flush()
    }

    private func finish(_ outcome: Result<Bool, ProtocolError>, byPeer: Bool = false) {
        guard !reported else { return }
        reported = true
        if let result {
            result(outcome)
        } else if case .failure(let error) = outcome, !heard, let admitted {
            admitted.endedUnidentified(error.code == .timeout || error.code == .connectionLost ? .halfOpen : .foreign)
        } else if case .failure(let error) = outcome {
            events?.emit(.messageRefused(remote: remote, reason: error.message, byPeer: byPeer))
        }
    }

    /// Answers a confirmation query off the event loop (the store remembers an exchange it does not
    /// hold as withdrawn, in the same transaction), then replies.
    private func answer(_ edge: String, senderStatic: X25519.PublicKey) {
        guard let authority, let connection else { return }
        let answered = connection.onLoop { (held: Result<Bool, ProtocolError>) in
            switch held {
            case .success(let held): self.perform(self.machine.answered(held: held))
            case .failure(let error): self.perform(self.machine.abort(error))
            }
        }
        Task.detached { answered(authority.answerConfirmation(edge: edge, from: senderStatic)) }
    }

    /// Checks and stores a delivery off the event loop (SQLite blocks), then answers.
    private func authorize(_ delivery: MailboxStateMachine.Delivery) {
        guard let authority, let connection else { return }
        let events = self.events
        let decided = connection.onLoop { (outcome: MailboxAuthority.Outcome) in
            switch outcome {
            case .stored(let item):
                if let item { events?.emit(.messageReceived(item)) }
                self.perform(self.machine.authorized(duplicate: false))
            case .duplicate:
                self.perform(self.machine.authorized(duplicate: true))
            case .refused(let error):
                self.perform(self.machine.refused(error))
            }
        }
        Task.detached { decided(authority.accept(delivery)) }
    }
}
