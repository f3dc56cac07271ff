internal import Dispatch
internal import Glibc
internal import Synchronization
internal import TransferModel

/// The thread a store's group commits run on (`QueuedWriter.scheduleGroupCommit`): woken by the
/// first write after a commit, it waits the group-commit window, then commits what queued.
///
/// Why a thread of its own, at a lower CPU priority (nice `niceness`): a group commit of a
/// busy 2-core daemon is milliseconds of CPU in one go (the rows, events and metrics of some
/// thirty downloads). On a dispatch worker at the same priority it took the CPU from the engine
/// updates thread, whose next admissions the engine was waiting for, while the other core sat
/// idle: Linux does not move a preempted thread to an idle core for up to a scheduler tick.
/// Niced, the commit yields to the engine and updates threads and fills the idle time instead
/// (issue 18, 16 KiB downloads on tmpfs: with the engine's early slot release about a tenth
/// more files per second; alone, a fifth more while other processes load the machine, and
/// within the noise on a quiet one). Nothing waits
/// for it that cannot wait: an API write's `commit()` and a creation's `settle` drain at once
/// on their own thread, at their own priority. Raising a thread's nice needs no privilege.
final class GroupCommitThread: Sendable {
    /// How much lower the thread's priority is than the daemon's other threads.
    static let niceness: Int32 = 10

    private let window: Duration
    private let wakeUp = DispatchSemaphore(value: 0)
    private let stopping = Atomic<Bool>(false)

    init(window: Duration) {
        self.window = window
    }

    /// Starts the thread; `commit` runs once per wake-up, a window after it.
    func start(_ commit: @escaping @Sendable () -> Void) {
        DedicatedThread.start { [self] in
            // PRIO_PROCESS with 0 names the calling thread on Linux, not the process.
            _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, Self.niceness)
            while true {
                wakeUp.wait()
                if stopping.load(ordering: .acquiring) { return }
                sleepOutTheWindow()
                if stopping.load(ordering: .acquiring) { return }
                commit()
            }
        }
    }

    /// A write was queued: commit a window from now.
    func wake() { wakeUp.signal() }

    /// Ends the thread (after the commit it may be in).
    func stop() {
        guard !stopping.exchange(true, ordering: .acquiringAndReleasing) else { return }
        wakeUp.signal()
    }

    private func sleepOutTheWindow() {
        let (seconds, attoseconds) = window.components
        var request = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
        var remaining = timespec()
        while nanosleep(&request, &remaining) != 0, errno == EINTR { request = remaining }
    }
}
