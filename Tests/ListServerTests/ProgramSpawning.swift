import Foundation
import TestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// Starts `arguments` with posix_spawn as a shell would (no signal blocked, so a script's traps run;
/// `TERM` set, `TMUX` unset): standard input from /dev/null, standard output to `outputPath`, standard
/// error to `errorPath` (into the output when nil). Foundation's `Process` is not used: it waits for
/// every holder of the descriptor it watches (a tmux server started by the program, for one).
func spawnProgram(_ arguments: [String], outputPath: String, errorPath: String?, environment extra: [String: String] = [:]) throws -> pid_t {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0o600)
    if let errorPath {
        posix_spawn_file_actions_addopen(&actions, 2, errorPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    } else {
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
    }
    var environment = ProcessInfo.processInfo.environment
    environment["TERM"] = "xterm-256color"
    environment.removeValue(forKey: "TMUX")
    environment.merge(extra) { $1 }
    let argv = arguments.map { strdup($0) } + [nil]
    let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer {
        for pointer in argv { free(pointer) }
        for pointer in envp { free(pointer) }
    }
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    var empty = sigset_t()
    sigemptyset(&empty)
    posix_spawnattr_setsigmask(&attributes, &empty)
    posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK))
    var pid: pid_t = 0
    let spawned = ChildProcessLaunch.exclusively { posix_spawnp(&pid, arguments[0], &actions, &attributes, argv, envp) }
    guard spawned == 0 else { throw TestFailure("cannot run \(arguments[0]): \(String(cString: strerror(spawned)))") }
    return pid
}
