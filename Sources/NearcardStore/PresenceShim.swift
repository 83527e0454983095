import NearcardCrypto
import Synchronization

// WORK IN PROGRESS on branch v2 — replaced when branch v2-presence (the presence key kept in the
// database, migration v12) is merged. Not to land on main.
private let shimKey = Mutex<[UInt8]?>(nil)

extension NearcardDatabase {
    public func presenceKey() throws(StoreError) -> [UInt8] {
        shimKey.withLock { k in
            if let k { return k }
            let new = Sodium.randomBytes(16)
            k = new
            return new
        }
    }
}
