import FuzzSupport

/// The DNS-SD TXT record of a peer: any list of strings (as avahi hands them over) reads as a
/// record or as nothing, and what is read survives being written again.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTXT(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let record = TXTRecord(parsing: Fuzz.split(Fuzz.bytes(data, size), limit: 64))
    let again = TXTRecord(parsing: record.entries)
    precondition(again == record, "a TXT record does not survive being written and read again")
    return 0
}
