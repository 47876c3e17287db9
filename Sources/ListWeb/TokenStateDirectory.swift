import FileSafety
import Foundation

/// Where listweb keeps its token between starts (`--state-directory`): the file `token` in a directory
/// of listweb's user that no one else may write, made on the first start and read on the later ones,
/// so that a page left open keeps working when listweb restarts.
///
/// Nothing there is opened through a name another user could plant: the directory is made with mode
/// 0700 (or checked as this user's and writable by no one else, and the directories above it too), then
/// opened once; the token file is opened through that descriptor without following a symbolic link,
/// made with `O_CREAT | O_EXCL` and mode 0600, and on later starts must be a regular file of this user,
/// with one name, that no one else may read or write.
public enum TokenStateDirectory {
    /// The token file's name in the directory.
    public static let fileName = "token"

    /// The default directory: `$STATE_DIRECTORY` (systemd's `StateDirectory=`, the first of a
    /// colon-separated list), else `$XDG_STATE_HOME/listweb`, else `~/.local/state/listweb`.
    public static func defaultPath(environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        if let systemd = environment["STATE_DIRECTORY"], let first = systemd.split(separator: ":").first, !first.isEmpty {
            return String(first)
        }
        if let xdg = environment["XDG_STATE_HOME"], xdg.hasPrefix("/") { return xdg + "/listweb" }
        if let home = environment["HOME"], home.hasPrefix("/") { return home + "/.local/state/listweb" }
        return nil
    }

    /// The token kept in `directory`: read when there, else made (random) and written there first.
    /// `created` says which; `file` is its path.
    public static func token(in directory: String) throws -> (token: AccessToken, created: Bool, file: String) {
        let opened: (descriptor: Int32, path: String)
        do {
            opened = try TrustedPath.openPrivateDirectory(directory)
        } catch {
            throw TokenFileError("cannot keep the token in \(directory): \(error)")
        }
        defer { close(opened.descriptor) }
        let file = opened.path + "/" + fileName
        // Two listwebs starting at once with the same directory: one makes the file, the other reads it
        // (and waits, briefly, for its line to be written).
        let deadline = ContinuousClock.now + .seconds(2)
        while true {
            let descriptor: Int32?
            do {
                descriptor = try TrustedPath.openFile(in: opened.descriptor, named: fileName, shownAs: file, flags: O_RDONLY)
            } catch {
                throw TokenFileError("\(error)")
            }
            if let descriptor {
                let bytes = AccessToken.readAll(descriptor)
                close(descriptor)
                if !bytes.contains(UInt8(ascii: "\n")) && ContinuousClock.now < deadline {
                    usleep(10_000)  // another start is writing it
                    continue
                }
                if bytes.isEmpty {
                    throw TokenFileError("\(file) is empty (a start that stopped while making it?): remove it, and listweb makes a new token")
                }
                return (try AccessToken.parse(bytes, path: file), false, file)
            }
            let token = AccessToken.random()
            let made: Int32?
            do {
                made = try TrustedPath.openFile(in: opened.descriptor, named: fileName, shownAs: file, flags: O_WRONLY | O_CREAT | O_EXCL, mode: 0o600)
            } catch {
                throw TokenFileError("\(error)")
            }
            guard let made else { continue }  // made by another start meanwhile: read it
            defer { close(made) }
            let line = Array((token.value + "\n").utf8)
            var offset = 0
            while offset < line.count {
                let written = line[offset...].withUnsafeBytes { write(made, $0.baseAddress, $0.count) }
                if written < 0 && errno == EINTR { continue }
                guard written > 0 else {
                    let reason = String(cString: strerror(errno))
                    unlinkat(opened.descriptor, fileName, 0)
                    throw TokenFileError("cannot write \(file): \(reason)")
                }
                offset += written
            }
            // On disk before anyone is given the address: a crash must not leave a tab with a token that is gone.
            _ = fsync(made)
            _ = fsync(opened.descriptor)
            return (token, true, file)
        }
    }
}
