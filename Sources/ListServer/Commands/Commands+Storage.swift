import ListDurability
import ListWire

/// `backup`: a consistent copy of the stored state (administrators only).
struct BackupCommand: CommandDeclaration {
    static let about = CommandAbout("backup", "A consistent copy of the stored state: the SQLite database as one file, in base64 (listctl backup FILE writes it). Root and listd's own user only.", result: "{bytes, database}")
    func run(_ context: CommandContext) throws(WireError) -> CommandResult {
        // The copy holds every user's data: for administrators only.
        try context.state.requireAdministrator(context.connection, for: "backup")
        guard let pipeline = context.state.storage.pipeline else {
            throw WireError(.ephemeral, "listd runs with --ephemeral: nothing is stored, so there is nothing to back up.")
        }
        // A read: it runs once everything acknowledged is written, and the writer copies
        // the database between two groups.
        let deferred = Deferred<CommandResult>()
        pipeline.backup { result in
            switch result {
            case .success(let image):
                deferred.resolve(
                    CommandResult { writer in
                        writer.key("bytes")
                        writer.int(image.count)
                        writer.key("database")
                        writer.raw([UInt8(ascii: "\"")] + Base64.encode(image) + [UInt8(ascii: "\"")])
                    })
            case .failure(let error):
                let failed = CommandResult(reply: .failure(WireError(.storageFailed, "The backup failed: \(error)")))
                deferred.resolve(failed)
            }
        }
        var waiting = CommandResult { _ in }
        waiting.deferred = deferred
        return waiting
    }
}

extension CommandRouter {
    static var storageCommands: [Command] { [Command(BackupCommand.self)] }
}
