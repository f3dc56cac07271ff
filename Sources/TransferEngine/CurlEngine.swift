package import Curl
internal import Synchronization

/// The transfer engine as other threads see it: a locked inbox of commands and a waker. The curl
/// multi handle itself lives on one dedicated thread (`EngineLoop`); posting a command never
/// blocks on a transfer. Owned by `TransferService`.
package final class CurlEngine: Sendable {
    private let thread: MultiThread<EngineInbox>
    /// Carries updates from the engine thread to the observer (`UpdateRelay`); set by `start`.
    private let relay = Mutex<UpdateRelay?>(nil)

    /// `connectionGate`: every connection of every transfer and stream task is put to it
    /// (`NetworkPolicy.connectionGate`).
    package init(maxCachedConnections: Int = 256, connectionGate: ConnectionGate? = nil) throws {
        let multi = try MultiHandle(connectionGate: connectionGate)
        try multi.setLimits(maxHostConnections: 0, maxTotalConnections: 0, maxCachedConnections: maxCachedConnections)
        thread = MultiThread(multi, inbox: EngineInbox())
    }

    /// Starts the engine thread, reporting to `observer` until `stop`. Call once.
    package func start(observer: any TransferObserver) {
        let relay = UpdateRelay(target: observer)
        self.relay.withLock { $0 = relay }
        thread.start { [thread] multi in EngineLoop(multi: multi, observer: relay).run(inbox: thread.inbox) }
    }

    /// Whether the engine thread runs (started, not stopped).
    package var isRunning: Bool { thread.isRunning }

    package func submit(_ command: EngineCommand) {
        // One wake-up until the loop takes the commands: a service run that starts sixteen
        // transfers wakes the engine once (curl_multi_wakeup is remembered until its next poll).
        thread.post { inbox in
            inbox.commands.append(command)
            return inbox.commands.count == 1
        }
    }

    /// Stops the thread: running transfers are dropped (their tasks stay as the service recorded
    /// them), every easy handle is removed, then the multi handle is cleaned up. Waits up to
    /// `timeout` seconds; returns whether the thread ended.
    @discardableResult
    package func stop(timeout: Double) -> Bool {
        let stopped = thread.stop(timeout: timeout)
        // What the engine reported before it stopped reaches the observer before this returns.
        let relay = self.relay.withLock { relay in
            defer { relay = nil }
            return relay
        }
        return (relay?.stop(timeout: timeout) ?? true) && stopped
    }
}

/// Commands waiting for the engine thread.
struct EngineInbox: MultiThreadInbox {
    var commands: [EngineCommand] = []
    var stopping = false
}
