import Foundation

/// Bounded waits for the programs tests start: a child that hangs is killed and named instead of holding
/// the test run (and CI) for ever. Not part of any product.
extension Process {
    /// Waits until the process exits, at most `timeout`. Past it the process is killed with SIGKILL (its
    /// status then says so) and waited for ten seconds more; `false` when it was killed (or its end was
    /// not seen: reading `terminationStatus` then traps, which ends the run at once). Never waits
    /// without a bound: Foundation learns of a child's end when a socket the child holds closes, and a
    /// copy of that socket leaked into another program (started by another thread at the same moment)
    /// keeps it open; the report then says the child had exited.
    @discardableResult
    public func waitUntilExit(within timeout: Duration) -> Bool {
        if waitForExit(until: ContinuousClock.now + timeout) { return true }
        killReportingHang(after: timeout)
        _ = waitForExit(until: ContinuousClock.now + .seconds(10))
        return false
    }

    private func waitForExit(until deadline: ContinuousClock.Instant) -> Bool {
        while isRunning {
            if ContinuousClock.now >= deadline { return false }
            Thread.sleep(forTimeInterval: 0.005)
        }
        return true
    }

    /// Kills the process with SIGKILL if it still runs after `timeout`: a watchdog for reading its output
    /// to the end, which would otherwise wait as long as it runs. Cancel the returned item when done.
    public func killIfStillRunning(after timeout: Duration) -> DispatchWorkItem {
        let watchdog = DispatchWorkItem { [self] in
            if isRunning { killReportingHang(after: timeout) }
        }
        let (seconds, attoseconds) = timeout.components
        let nanoseconds = Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)
        DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(nanoseconds), execute: watchdog)
        return watchdog
    }

    private func killReportingHang(after timeout: Duration) {
        let name = executableURL?.lastPathComponent ?? "?"
        // Whether it had in fact exited (a zombie not reaped yet): looked at without reaping it.
        var information = siginfo_t()
        let exited = waitid(P_PID, id_t(processIdentifier), &information, WEXITED | WNOHANG | WNOWAIT) == 0
            && information._sifields._sigchld.si_pid == processIdentifier
        let state = exited ? "had exited, but Foundation did not see its end (a descriptor leaked into another child?)" : "still ran: killed"
        let line = "test harness: \(name) \((arguments ?? []).joined(separator: " ")) after \(timeout): \(state)\n"
        FileHandle.standardError.write(Data(line.utf8))
        // Foundation starts every child in a process group of its own: the group goes (a shell's
        // children too), then the child itself.
        if !exited {
            kill(-processIdentifier, SIGKILL)
            kill(processIdentifier, SIGKILL)
        }
    }
}
