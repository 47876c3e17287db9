import Foundation

/// Starting children from tests that run in parallel without one child inheriting another's descriptors.
///
/// Foundation's `Process` learns that a child ended when a socket the child holds closes, and a pipe's
/// reader sees its end when every copy of the write end closes. `Process.run()` closes the parent's
/// descriptors in the child by number, up to the highest open when it looked: a descriptor another thread
/// opened meanwhile (another `run()`'s socket, a `Pipe`) is inherited by this child, and then that other
/// child's end, or its pipe's end, is not seen until this one exits too. Two tests waiting on each other's
/// children that way never finish. So every test starts its children through `start()`, pipes come from
/// `makePipe()`, both under one lock, and after each start every descriptor of the test process is made
/// close-on-exec: a child inherits only what it was given. Not part of any product.
public enum ChildProcessLaunch {
    static let lock = NSLock()

    /// Runs `body` (a spawn) under the launch lock, then marks every descriptor close-on-exec.
    public static func exclusively<Result>(_ body: () throws -> Result) rethrows -> Result {
        lock.lock()
        defer {
            markEveryDescriptorCloseOnExec()
            lock.unlock()
        }
        return try body()
    }

    /// Sets FD_CLOEXEC on every descriptor above stderr.
    static func markEveryDescriptorCloseOnExec() {
        guard let directory = opendir("/proc/self/fd") else { return }
        defer { closedir(directory) }
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            guard let descriptor = Int32(name), descriptor > STDERR_FILENO else { continue }
            let flags = fcntl(descriptor, F_GETFD)
            if flags >= 0 && flags & FD_CLOEXEC == 0 { _ = fcntl(descriptor, F_SETFD, flags | FD_CLOEXEC) }
        }
    }
}

extension Process {
    /// `run()` without leaking descriptors into children other tests start at the same time (see
    /// `ChildProcessLaunch`).
    public func start() throws {
        try ChildProcessLaunch.exclusively { try run() }
    }
}

/// A `Pipe` whose two ends are close-on-exec from the start (a child gets the end it is given, as its
/// stdin, stdout or stderr, and nothing else).
public func makePipe() -> Pipe {
    ChildProcessLaunch.exclusively { Pipe() }
}
