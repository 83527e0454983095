import Foundation
import NearcardModel
import NearcardStore
import Testing

@testable import NearcardAddressBook

/// The parts of CardDAV sync that need no server: where the password comes from, the card's UID, the
/// WebDAV answers as an XML parser reads them, and which URLs the password may travel to.
@Suite struct AddressBookUnitTests {
    func temporaryDirectory() throws -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("nearcard-ab-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return dir
    }

    @Test func aPasswordFileMustBePrivateAndLosesItsNewline() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let file = dir + "/pw"
        try "s3cret pass\n".write(toFile: file, atomically: true, encoding: .utf8)
        chmod(file, 0o644)
        #expect(throws: AddressBookError.self) { try AddressBookSync.password(credential: "file:" + file, account: "A") }
        do {
            _ = try AddressBookSync.password(credential: "file:" + file, account: "https://dav.example/")
        } catch {
            #expect(error.kind == .credential)
            #expect(error.message.contains("https://dav.example/") && error.message.contains("chmod 600"), "\(error.message)")
        }
        chmod(file, 0o600)
        #expect(try AddressBookSync.password(credential: "file:" + file, account: "A") == "s3cret pass")
        try "".write(toFile: file, atomically: true, encoding: .utf8)
        chmod(file, 0o600)
        #expect(throws: AddressBookError.self) { try AddressBookSync.password(credential: "file:" + file, account: "A") }
    }

    @Test func aSystemdCredentialIsReadFromCredentialsDirectory() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try "from-systemd".write(toFile: dir + "/carddav", atomically: true, encoding: .utf8)
        chmod(dir + "/carddav", 0o400)
        #expect(try AddressBookSync.password(credential: "credential:carddav", account: "A", environment: ["CREDENTIALS_DIRECTORY": dir]) == "from-systemd")
        do {
            _ = try AddressBookSync.password(credential: "credential:carddav", account: "A", environment: [:])
            Issue.record("a credential without $CREDENTIALS_DIRECTORY was read")
        } catch {
            #expect(error.message.contains("LoadCredential=carddav"), "\(error.message)")
        }
    }

    /// One collection under two names is one collection: another host name for the same machine, the
    /// default port written out; another path or port is another collection.
    @Test func oneCollectionUnderTwoNamesIsRecognised() {
        #expect(AddressBookSync.sameCollection("https://localhost:5235/alice/contacts/", "https://127.0.0.1:5235/alice/contacts/"))
        #expect(AddressBookSync.sameCollection("https://LOCALHOST:5235/alice/contacts", "https://localhost:5235/alice/contacts/"))
        #expect(AddressBookSync.sameCollection("https://127.0.0.1/alice/contacts/", "https://127.0.0.1:443/alice/contacts/"))
        #expect(!AddressBookSync.sameCollection("https://localhost:5235/alice/contacts/", "https://127.0.0.1:5236/alice/contacts/"))
        #expect(!AddressBookSync.sameCollection("https://localhost:5235/alice/contacts/", "https://localhost:5235/alice/work/"))
        #expect(!AddressBookSync.sameCollection("https://127.0.0.2:5235/a/", "https://127.0.0.1:5235/a/"))
    }

    @Test func theUIDIsStablePerContactAndAUUID() {
        let a = AddressBookSync.uid(contactID: "C1")
        #expect(a == AddressBookSync.uid(contactID: "C1"), "one UID per contact, whatever the account")
        #expect(a != AddressBookSync.uid(contactID: "C2"))
        #expect(UUID(uuidString: a) != nil, "\(a)")
        #expect(!a.contains("C1"))
    }

    /// Prefixes are the server's choice; only the namespaces count. A property in a 404 propstat is absent.
    @Test func aMultistatusIsReadByNamespaceNotPrefix() throws {
        let body = """
            <?xml version="1.0"?>
            <x:multistatus xmlns:x="DAV:" xmlns:c="urn:ietf:params:xml:ns:carddav">
              <x:response><x:href>/u/book/</x:href>
                <x:propstat><x:prop><x:resourcetype><x:collection/><c:addressbook/></x:resourcetype><x:getetag>"b1"</x:getetag></x:prop><x:status>HTTP/1.1 200 OK</x:status></x:propstat>
                <x:propstat><x:prop><x:current-user-principal/></x:prop><x:status>HTTP/1.1 404 Not Found</x:status></x:propstat>
              </x:response>
              <x:response><x:href>/u/book/a%20b.vcf</x:href>
                <x:propstat><x:prop><x:getetag>"e&amp;1"</x:getetag><x:resourcetype/></x:prop><x:status>HTTP/1.1 200 OK</x:status></x:propstat>
              </x:response>
            </x:multistatus>
            """
        let responses = try #require(try DAVResponse.multistatus(Array(body.utf8)))
        #expect(responses.count == 2)
        #expect(CardDAVClient.isAddressBook(responses[0]))
        #expect(responses[0].property(DAVElement.dav, "current-user-principal") == nil)
        #expect(responses[1].property(DAVElement.dav, "getetag")?.text == "\"e&1\"")
        #expect(CardDAVClient.key(URL(string: "https://h/u/book/a%20b.vcf")!) == "/u/book/a b.vcf")
        #expect(try DAVResponse.multistatus(Array("<html>login</html>".utf8)) == nil)
        #expect(try DAVResponse.multistatus(Array("<d:multistatus xmlns:d=\"DAV:\">".utf8)) == nil) // not well-formed
    }

    /// A server's answer cannot make the parser read a file, reach the network or expand entities
    /// it declares (libxml2 through CXML, loaded on first use); CDATA is text; a document cut short or
    /// with text after its root is refused.
    @Test func aServersXMLCannotReachFilesOrExpandEntities() throws {
        let secret = FileManager.default.temporaryDirectory.appendingPathComponent("nearcard-xxe-\(UUID().uuidString)")
        try "TOP-SECRET".write(to: secret, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: secret) }
        let xxe = """
            <?xml version="1.0"?>
            <!DOCTYPE d:multistatus [ <!ENTITY leak SYSTEM "file://\(secret.path)"> <!ENTITY a "aaaaaaaaaa"> <!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;"> ]>
            <d:multistatus xmlns:d="DAV:"><d:response><d:href>/x&leak;&b;</d:href></d:response></d:multistatus>
            """
        let root = try DAVElement.parse(Array(xxe.utf8))
        let text = root.map { "\($0)" } ?? ""
        #expect(!text.contains("TOP-SECRET"))
        #expect(!text.contains("aaaaaaaaaa"))
        let cdata = try #require(try DAVElement.parse(Array("<a xmlns=\"DAV:\"><b><![CDATA[x<&>y]]></b></a>".utf8)))
        #expect(cdata.namespace == "DAV:" && cdata.name == "a")
        #expect(cdata.child("DAV:", "b")?.text == "x<&>y")
        #expect(try DAVElement.parse(Array("<a><b></a>".utf8)) == nil)
        #expect(try DAVElement.parse(Array("<a/>trailing".utf8)) == nil)
        #expect(try DAVElement.parse([]) == nil)
        let none = try #require(try DAVElement.parse(Array("<plain>t</plain>".utf8)))
        #expect(none.namespace == "" && none.name == "plain" && none.text == "t")
    }

    /// The password goes over https, or plain http to this machine only.
    @Test func thePasswordTravelsOnlyOverHTTPSOrToThisMachine() throws {
        try CardDAVClient.checkScheme(URL(string: "https://dav.example.org/")!, account: "A")
        try CardDAVClient.checkScheme(URL(string: "http://localhost:5232/")!, account: "A")
        try CardDAVClient.checkScheme(URL(string: "http://127.0.0.1:5232/")!, account: "A")
        #expect(throws: AddressBookError.self) { try CardDAVClient.checkScheme(URL(string: "http://dav.example.org/")!, account: "A") }
        #expect(throws: AddressBookError.self) { try CardDAVClient.checkScheme(URL(string: "ftp://dav.example.org/")!, account: "A") }
    }

    /// Contacts met in person always go; QR contacts only when the account says; hand-made ones never.
    @Test func whichContactsGoToAnAccount() {
        func contact(_ source: ContactSource) -> Contact {
            Contact(card: Card(name: "Ada"), source: source, verificationStatus: .verified, receivedAt: Date())
        }
        let plain = AddressBookAccount(url: "https://a/", serverURL: "https://a/", username: "u", credential: "file:/x", includeQR: false)
        let withQR = AddressBookAccount(url: "https://a/", serverURL: "https://a/", username: "u", credential: "file:/x", includeQR: true)
        #expect(AddressBookSync.syncs(contact(.proximity), to: plain) && AddressBookSync.syncs(contact(.proximity), to: withQR))
        #expect(!AddressBookSync.syncs(contact(.qrCode), to: plain) && AddressBookSync.syncs(contact(.qrCode), to: withQR))
        #expect(!AddressBookSync.syncs(contact(.manual), to: plain) && !AddressBookSync.syncs(contact(.manual), to: withQR))
    }
}
