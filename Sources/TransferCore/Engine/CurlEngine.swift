internal import Curl
internal import Dispatch
internal import Synchronization

/// The transfer engine as other threads see it: a locked inbox of commands and a waker. The curl
/// multi handle itself lives on one dedicated thread (`EngineLoop`); posting a command never
/// blocks on a transfer. Owned by `TransferService`.
final class CurlEngine: Sendable {
    private let inbox = Mutex(EngineInbox())
    private let waker: MultiWaker
    private let multi: HandOff<MultiHandle>
    private let finished = DispatchSemaphore(value: 0)
    private let started = Atomic<Bool>(false)

    init(maxCachedConnections: Int = 256) throws {
        let multi = try MultiHandle()
        try multi.setLimits(maxHostConnections: 0, maxTotalConnections: 0, maxCachedConnections: maxCachedConnections)
        waker = multi.waker
        self.multi = HandOff(multi)
    }

    /// Starts the engine thread, reporting to `observer` until `stop`. Call once.
    func start(observer: any TransferObserver) {
        guard !started.exchange(true, ordering: .relaxed) else { return }
        DedicatedThread.start { [self] in
            EngineLoop(multi: multi.take(), observer: observer).run(inbox: inbox)
            finished.signal()
        }
    }

    func submit(_ command: EngineCommand) {
        inbox.withLock { $0.commands.append(command) }
        waker.wakeup()
    }

    /// Stops the thread: running transfers are dropped (their tasks stay as the service recorded
    /// them), every easy handle is removed, then the multi handle is cleaned up. Waits up to
    /// `timeout` seconds; returns whether the thread ended.
    @discardableResult
    func stop(timeout: Double) -> Bool {
        guard started.load(ordering: .relaxed) else { return true }
        inbox.withLock { $0.stopping = true }
        waker.wakeup()
        guard finished.wait(timeout: .now() + timeout) == .success else { return false }
        finished.signal()  // stays signalled: a later stop returns at once instead of timing out
        return true
    }
}

/// Commands waiting for the engine thread.
struct EngineInbox: Sendable {
    var commands: [EngineCommand] = []
    var stopping = false
}

/// Moves a non-Sendable value to another thread exactly once.
///
/// `@unchecked Sendable`: the creating thread never touches the value after wrapping it, and
/// `take()` is called once, by the thread that then owns the value.
final class HandOff<Value>: @unchecked Sendable {
    private var value: Value?
    init(_ value: Value) { self.value = value }
    func take() -> Value {
        guard let value else { preconditionFailure("HandOff.take called twice") }
        self.value = nil
        return value
    }
}
