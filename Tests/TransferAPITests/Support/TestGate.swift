/// Limits how many daemons the suite runs at once, and lets a test run alone.
///
/// Swift Testing runs tests (and parameterised cases) in parallel; each test here starts a daemon
/// with its own threads and sockets. On a 2-core machine a few at a time is plenty, and the
/// tests that measure the process (thread counts, fan-out latency) must run with nothing else
/// in it. Shared holders take one of `sharedSlots`; an exclusive holder waits for all of them to
/// leave, and shared requests that arrive after it wait for it (no starvation).
actor TestGate {
    static let shared = TestGate(sharedSlots: 6)

    private let sharedSlots: Int
    private var sharedHolders = 0
    private var exclusiveHeld = false
    private var waitingShared: [CheckedContinuation<Void, Never>] = []
    private var waitingExclusive: [CheckedContinuation<Void, Never>] = []

    init(sharedSlots: Int) { self.sharedSlots = max(1, sharedSlots) }

    /// Runs `body` holding the gate, shared or exclusive; releases it however `body` ends.
    nonisolated func run<T>(exclusive: Bool, _ body: () async throws -> T) async throws -> T {
        if exclusive { await acquireExclusive() } else { await acquireShared() }
        do {
            let result = try await body()
            await release(exclusive: exclusive)
            return result
        } catch {
            await release(exclusive: exclusive)
            throw error
        }
    }

    private func acquireShared() async {
        if !exclusiveHeld, waitingExclusive.isEmpty, sharedHolders < sharedSlots {
            sharedHolders += 1
            return
        }
        // Resumed by `grant()`, which has already counted this holder.
        await withCheckedContinuation { waitingShared.append($0) }
    }

    private func acquireExclusive() async {
        if !exclusiveHeld, sharedHolders == 0 {
            exclusiveHeld = true
            return
        }
        await withCheckedContinuation { waitingExclusive.append($0) }
    }

    private func release(exclusive: Bool) {
        if exclusive { exclusiveHeld = false } else { sharedHolders -= 1 }
        grant()
    }

    /// Hands the gate to whoever may have it now: a waiting exclusive holder once no one holds
    /// it, else as many waiting shared holders as there are free slots.
    private func grant() {
        guard !exclusiveHeld else { return }
        if !waitingExclusive.isEmpty {
            guard sharedHolders == 0 else { return }
            exclusiveHeld = true
            waitingExclusive.removeFirst().resume()
            return
        }
        while sharedHolders < sharedSlots, !waitingShared.isEmpty {
            sharedHolders += 1
            waitingShared.removeFirst().resume()
        }
    }
}
