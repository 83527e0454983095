import Foundation
import NearcardCrypto
import NearcardModel
import NearcardStore
import NearcardTestSupport
import Testing

/// Private common contacts (docs/PROTOCOL.md §22) between real nodes: `share --common-contacts on` on
/// both sides, one node listening in a lab's namespace, the other dialling it over loopback (or the
/// independent Python peer, Tests/Interop/python_peer.py, dialling it). Each side learns exactly which of
/// its own contacts the other holds, and the other's set size up to its bucket; with the feature off on
/// either side the exchange runs as before and nothing about common contacts is shown.
@Suite(.serialized) struct CommonContactsTests {
    let peer = CLI.packageRoot.appendingPathComponent("Tests/Interop/python_peer.py").path
    func log(_ name: String) -> URL { FileManager.default.temporaryDirectory.appendingPathComponent("nearcard-\(UUID().uuidString)-\(name).log") }

    /// Fresh P-256 did:keys, standing for people in the books.
    static func dids(_ count: Int) -> [String] { (0..<count).map { _ in DIDKey(P256.PrivateKey().publicKey).did } }

    /// §22.2's buckets: the first at least as large as the set (an empty set is padded to 8).
    static func bucket(_ n: Int) -> Int { [8, 16, 32, 64, 128, 256, 512, 1000].first { $0 >= n }! }

    /// Contacts with these DIDs in `person`'s book (PresenceLANTests' `withBook`).
    func fill(_ person: TestPerson, with dids: [String]) throws {
        try withBook(of: person) { book in
            for (i, did) in dids.enumerated() {
                _ = try book.keep(
                    Contact(
                        card: Card(name: "Friend \(i) of \(person.home.lastPathComponent.suffix(6))"), source: .proximity,
                        verificationStatus: .verified, receivedAt: Date(), didPublicKey: did))
            }
        }
    }

    func share(_ person: TestPerson, _ on: Bool) throws {
        let r = try person.cli.run(["share", "--common-contacts", on ? "on" : "off", "--json"])
        #expect(r.code == 0 && r.json["commonContacts"]?.boolValue == on, "\(r.stdout) \(r.stderr)")
    }

    /// `contacts show NAME --json` at `holder`, once the contact is stored (the listener stores it as the
    /// exchange ends).
    func shown(_ name: String, at holder: TestPerson) throws -> JSONValue {
        for _ in 0..<100 {
            let r = try holder.cli.run(["contacts", "show", name, "--json"])
            if r.code == 0, r.json["name"]?.stringValue == name { return r.json }
            usleep(100_000)
        }
        throw LabError("\(name) never appeared in the book")
    }

    /// The DIDs of a JSON array (nil when absent).
    func strings(_ v: JSONValue?) -> [String]? { v?.arrayValue?.map { $0.stringValue ?? "?" } }

    /// Two nodes, both with the feature on and books that overlap (none, some, all, one book empty):
    /// the dialler's `exchange --json` names exactly the intersection and the listener's set bound;
    /// the listener keeps the same intersection with the dialler's contact.
    @Test(
        arguments: [
            ("none", 0, 2, 3), ("some", 2, 1, 8), ("all", 3, 0, 0), ("listener's book empty", 0, 3, -3),
            ("dialler's book empty", 0, -2, 2),
        ] as [(String, Int, Int, Int)])
    func twoNodesLearnExactlyTheirCommonContacts(overlap: String, shared: Int, onlyDialler: Int, onlyListener: Int) throws {
        // A negative count: that side's book is empty (its share of the shared DIDs too).
        let common = Self.dids(shared)
        let diallerBook = onlyDialler < 0 ? [] : common + Self.dids(onlyDialler)
        let listenerBook = onlyListener < 0 ? [] : common + Self.dids(onlyListener)
        let intersection = Set(diallerBook).intersection(listenerBook).sorted()

        let lab = try Lab("cc")
        let ada = try TestPerson(name: "Ada Lovelace")
        let grace = try TestPerson(name: "Grace Hopper")
        defer {
            ada.cli.cleanUp()
            grace.cli.cleanUp()
        }
        try fill(ada, with: listenerBook)
        try fill(grace, with: diallerBook)
        try share(ada, true)
        try share(grace, true)
        let (listener, port) = try lab.listen(home: ada.home, ["--accept", "all", "--no-discovery"], log: log("ada"))
        defer { listener.kill() }

        let r = try lab.nearcard(["exchange", "127.0.0.1:\(port)", "--yes", "--json"], home: grace.home)
        #expect(r.code == 0, "\(overlap): \(r.stderr)")
        #expect(r.json["name"] == "Ada Lovelace")
        #expect(strings(r.json["commonContacts"]) == intersection, "\(overlap): \(r.stdout)")
        #expect(r.json["peerSetBound"]?.integerValue == Int64(Self.bucket(listenerBook.count)), "\(overlap): \(r.stdout)")

        // The listener keeps its result with the contact ([] when the step found none, told apart from
        // no step at all); so does the dialler.
        let atAda = try shown("Grace Hopper", at: ada)
        #expect(strings(atAda["commonContacts"]) == intersection, "\(overlap): \(atAda)")
        let atGrace = try shown("Ada Lovelace", at: grace)
        #expect(strings(atGrace["commonContacts"]) == intersection, "\(overlap): \(atGrace)")
    }

    /// The feature off on one side (each side in turn): the exchange completes as §6 says, and neither
    /// side shows anything about common contacts, though the books overlap.
    @Test(arguments: [true, false])
    func aNodeWithoutItStillExchanges(listenerOn: Bool) throws {
        let shared = Self.dids(2)
        let lab = try Lab("cn")
        let ada = try TestPerson(name: "Ada Lovelace")
        let grace = try TestPerson(name: "Grace Hopper")
        defer {
            ada.cli.cleanUp()
            grace.cli.cleanUp()
        }
        try fill(ada, with: shared + Self.dids(1))
        try fill(grace, with: shared)
        try share(ada, listenerOn)
        try share(grace, !listenerOn)
        let (listener, port) = try lab.listen(home: ada.home, ["--accept", "all", "--no-discovery"], log: log("ada"))
        defer { listener.kill() }

        let r = try lab.nearcard(["exchange", "127.0.0.1:\(port)", "--yes", "--json"], home: grace.home)
        #expect(r.code == 0, "\(r.stderr)")
        #expect(r.json["name"] == "Ada Lovelace" && r.json["unconfirmed"] == nil, "\(r.stdout)")
        #expect(r.json["commonContacts"] == nil && r.json["peerSetBound"] == nil, "\(r.stdout)")
        #expect(try shown("Grace Hopper", at: ada)["commonContacts"] == nil)
        #expect(try shown("Ada Lovelace", at: grace)["commonContacts"] == nil)
    }

    /// The independent Python peer (PROTOCOL.md alone, psi.py's pure-Python ristretto255) as the
    /// initiator against a node with the feature on: both learn the intersection. With an empty set it
    /// learns nothing in common; without the option it never offers the step, and the exchange completes.
    @Test func thePythonPeerInteroperates() throws {
        let shared = Self.dids(2)
        let nodeOnly = Self.dids(2)
        let pythonOnly = Self.dids(1)
        let node = try TestPerson(name: "Swift Node")
        defer { node.cli.cleanUp() }
        try fill(node, with: shared + nodeOnly)
        try share(node, true)
        let lab = try Lab("cp")
        let (process, port) = try lab.listen(home: node.home, ["--accept", "all", "--no-discovery"], log: log("node"))
        defer { process.kill() }

        let r = try lab.run([
            CLI.python, peer, "127.0.0.1", String(port), "--name", "Python Peer",
            "--common-contacts", (pythonOnly + shared).joined(separator: ","),
        ])
        #expect(r.code == 0, "\(r.stdout) \(r.stderr)")
        #expect(r.json["completed"] == true && r.json["peerOfferedCommonContacts"] == true, "\(r.stdout)")
        #expect(strings(r.json["commonContacts"]) == shared.sorted(), "\(r.stdout)")
        #expect(r.json["peerSetBound"]?.integerValue == 8, "\(r.stdout)")
        #expect(strings(try shown("Python Peer", at: node)["commonContacts"]) == shared.sorted())

        // An empty set: the step runs (the node learns a bucket of 8, nothing in common).
        let empty = try lab.run([CLI.python, peer, "127.0.0.1", String(port), "--name", "Python Empty", "--common-contacts", ""])
        #expect(empty.code == 0, "\(empty.stdout) \(empty.stderr)")
        #expect(strings(empty.json["commonContacts"]) == [] && empty.json["peerSetBound"]?.integerValue == 8, "\(empty.stdout)")
        #expect(strings(try shown("Python Empty", at: node)["commonContacts"]) == [], "the step ran and found none")

        // Without the option: the node offers, the peer does not, the exchange is §6's.
        let plain = try lab.run([CLI.python, peer, "127.0.0.1", String(port), "--name", "Python Plain"])
        #expect(plain.code == 0, "\(plain.stdout) \(plain.stderr)")
        #expect(plain.json["completed"] == true && plain.json["peerOfferedCommonContacts"] == true, "\(plain.stdout)")
        #expect(plain.json["commonContacts"] == nil && plain.json["peerSetBound"] == nil, "\(plain.stdout)")
        #expect(try shown("Python Plain", at: node)["commonContacts"] == nil)
    }
}
