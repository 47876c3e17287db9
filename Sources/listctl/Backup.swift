import ArgumentParser
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
            throw ExitCode(1)
        }
        do {
            try Self.write(image, to: file)
        } catch {
            Output.error("listctl: \(error)")
            throw ExitCode(1)
        }
        if !connection.json { print("backed up \(image.count) bytes to \(file)") }
    }

    /// Writes `bytes` to `path.partial`, syncs it and renames it over `path`: a reader never sees half a file.
    static func write(_ bytes: [UInt8], to path: String) throws {
        let partial = path + ".partial"
        let descriptor = open(partial, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw BackupError("cannot create \(partial): \(String(cString: strerror(errno)))") }
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
            if written < 0 {
                if errno == EINTR { continue }
                let reason = String(cString: strerror(errno))
                close(descriptor)
                unlink(partial)
                throw BackupError("cannot write \(partial): \(reason)")
            }
            offset += written
        }
        let synced = fsync(descriptor) == 0
        close(descriptor)
        guard synced, rename(partial, path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(partial)
            throw BackupError("cannot write \(path): \(reason)")
        }
    }
}

struct BackupError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
