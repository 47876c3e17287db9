import CellCore
import DiffableCore

extension Registration {
    /// What the registration holds, charged to its owner's account: its name and its definition
    /// (templates included) as given. The compiled form is proportional to it. O(size of the definition).
    var storedBytes: Int { name.utf8.count + definition.approximateByteCount }
}
