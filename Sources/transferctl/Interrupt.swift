internal import Glibc
internal import Synchronization

/// Ctrl-C as a flag: the SIGINT handler only sets it (an atomic store is async-signal-safe); the
/// transfer loops and libcurl's progress callback read it and stop, and the subcommand then
/// cancels its task. A second Ctrl-C ends the process at once (the handler restores the default).
enum Interrupt {
    private static let requested = Atomic<Bool>(false)

    /// Installs the handler; only subcommands that follow a task call it (others die on SIGINT).
    static func install() {
        _ = requested.load(ordering: .relaxed)  // initialise the static before a signal can touch it
        signal(SIGINT) { _ in
            Interrupt.requested.store(true, ordering: .relaxed)
            signal(SIGINT, SIG_DFL)
        }
    }

    static var isRequested: Bool { requested.load(ordering: .relaxed) }

    /// Clears the flag so the clean-up requests (cancelling the task) can run; the handler is
    /// already gone, so another Ctrl-C ends the process.
    static func acknowledge() { requested.store(false, ordering: .relaxed) }
}
