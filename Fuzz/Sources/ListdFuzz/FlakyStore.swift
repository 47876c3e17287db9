import ListStoreSQLite
import StoreTestKit

/// The fuzzer's durable mode: a real SQLite store in a fresh private directory (the test kit's
/// `FaultInjectingStore`) whose writes fail on a schedule the input picks (`plan`, bits 3–5 of the
/// mode byte): every `plan + 2`-th write fails, and with plan 7 every other read a failed write's probe
/// makes (the 1st, 3rd, …) fails too, so listd also refuses changes for a while. Faults are injected only
/// once `injecting` is set: the session's own setup (what root owns before an ordinary user's requests)
/// must not fail. Everything runs on the fuzzer's thread (the in-process server writes inline).
typealias FlakyStore = FaultInjectingStore

extension FaultInjectingStore {
    convenience init(plan: UInt8) {
        do {
            try self.init(sync: .periodic)
        } catch {
            violation("cannot open a SQLite store: \(error)", request: [])
        }
        isArmed = false
        let failEvery = Int(plan & 7) + 2
        fail(.write, every: failEvery, first: failEvery)
        if plan & 7 == 7 { fail(.load, every: 2, first: 1) }
    }

    /// Whether faults are injected (`isArmed`).
    var injecting: Bool {
        get { isArmed }
        set { isArmed = newValue }
    }
}
