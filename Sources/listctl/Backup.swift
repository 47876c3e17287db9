import ArgumentParser
import FileSafety
import ListClient
import ListWire

#if canImport(Glibc)
    import Glibc
#endif

/// `listctl backup FILE`: a consistent copy of listd's stored state while it runs.
struct Backup: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write a consistent copy of listd's stored state to FILE (a SQLite database listd can start from).",
        discussion: "To restore: stop listd, put FILE in its state directory as listd.sqlite3 (removing listd.sqlite3-wal and -shm), start listd.")
    @OptionGroup var connection: Connection
    @Argument(help: "Where to write the copy (replaced atomically when it exists).") var file: String

    func run() throws {
        let line = try connection.open()
        let result = try connection.send(request("backup", [:]), on: line)
        guard case .string(let encoded)? = result["database"], let image = Base64.decode(Array(encoded.utf8)),
            image.count == result["bytes"]?.intValue
        else {
            Output.error("listctl: listd sent a backup that does not decode")
            throw ExitStatus.refused.exitCode
        }
        do {
            try Self.write(image, to: file)
        } catch {
            Output.error("listctl: \(error)")
            throw ExitStatus.refused.exitCode
        }
        if !connection.json { print("backed up \(image.count) bytes to \(file)") }
    }

    /// Writes `bytes` to a new file beside `path`, syncs it and renames it over `path`: a reader never
    /// sees half a file, and a name planted beside it is never written through.
    static func write(_ bytes: [UInt8], to path: String) throws {
        do {
            try TrustedPath.replaceFile(path, with: bytes)
        } catch {
            throw BackupError(error.description)
        }
    }
}

struct BackupError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
