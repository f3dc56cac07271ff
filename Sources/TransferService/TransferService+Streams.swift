public import FoundationEssentials
internal import Synchronization
public import TransferModel
internal import TransferEngine

/// Stream tasks (URLSessionStreamTask): a task of kind `stream` connects to its host and port
/// as soon as it runs (no scheduler slot: a stream is a connection the client drives), and the
/// client then reads, writes, closes either side and starts TLS through the engine's
/// `StreamConnection`. Each command is answered once, from the engine thread, through `answer`;
/// nothing blocks while a read or a write waits.
extension TransferService {
    /// The most bytes one read answers (and one read's `min`): the receive buffer's size.
    public static let maxStreamRead = StreamJob.defaultBufferCapacity

    public func streamWrite(task id: Int, _ bytes: Data, timeout: Double, owner: String?, answer: @escaping @Sendable (StreamReply) -> Void) throws {
        let timeout = min(max(0, timeout), configuration.maxLongPollWait)
        try streamCommand(task: id, owner: owner, answer: answer) { .write(taskId: id, bytes: [UInt8](bytes), timeout: timeout, reply: $0) }
    }

    public func streamRead(task id: Int, min: Int, max: Int, wait: Double, owner: String?, answer: @escaping @Sendable (StreamReply) -> Void) throws {
        let wait = Swift.min(Swift.max(0, wait), configuration.maxLongPollWait)
        try streamCommand(task: id, owner: owner, answer: answer) { .read(taskId: id, min: min, max: max, wait: wait, reply: $0) }
    }

    public func streamCloseWrite(task id: Int, owner: String?, answer: @escaping @Sendable (StreamReply) -> Void) throws {
        try streamCommand(task: id, owner: owner, answer: answer) { .closeWrite(taskId: id, reply: $0) }
    }

    public func streamCloseRead(task id: Int, owner: String?, answer: @escaping @Sendable (StreamReply) -> Void) throws {
        try streamCommand(task: id, owner: owner, answer: answer) { .closeRead(taskId: id, reply: $0) }
    }

    public func streamStartTLS(task id: Int, owner: String?, answer: @escaping @Sendable (StreamReply) -> Void) throws {
        try streamCommand(task: id, owner: owner, answer: answer) { .startTLS(taskId: id, reply: $0) }
    }

    /// Checks the task is a visible, open stream and hands the command to the engine. A stream
    /// that completed cleanly answers a read with its end (a client racing the completion).
    private func streamCommand(task id: Int, owner: String?, answer: @escaping @Sendable (StreamReply) -> Void, _ make: (@escaping @Sendable (StreamReply) -> Void) -> StreamCommand) throws {
        let command = make(answer)
        var deliveriesAfterLock: (@Sendable () -> Void)?
        // One that left memory has completed: answered as a held completed stream is.
        if let stored = try storedIfLeft(id, owner: owner) {
            if try Self.endedStream(stored, command) { answer(.read([], ended: true)) }
            return
        }
        let ended = try state.withLock { s throws -> Bool in
            guard s.accepting else { throw ServiceError.shuttingDown }
            let entry = try visibleTask(s, id, owner)
            if let reads = entry.streamOfBody {
                // A data task that became a stream: its reads follow the body, off the lock.
                deliveriesAfterLock = { reads.carryOut(command) }
                return false
            }
            let task = entry.task
            switch task.state {
            case .completed, .canceling:
                return try Self.endedStream(task, command)
            case _ where task.kind != .stream:
                return try Self.endedStream(task, command)  // refuses: not a stream
            case .suspended:
                throw ServiceError.conflict(code: "stream_not_open", message: "stream task \(id) is suspended and has not connected; resume it first")
            case .running:
                engine.submit(.stream(command))
                return false
            }
        }
        deliveriesAfterLock?()
        if ended { answer(.read([], ended: true)) }
    }

    /// A stream that has ended (or a task that is no stream): true when a read is answered with
    /// the end (it completed cleanly), otherwise the refusal.
    private static func endedStream(_ task: TransferTask, _ command: StreamCommand) throws -> Bool {
        let id = task.id
        guard task.kind == .stream else {
            throw ServiceError.conflict(code: "not_a_stream", message: "task \(id) is a \(task.kind.rawValue) task; reads, writes, closes and start-tls are for stream tasks")
        }
        if task.state == .completed, task.error == nil {
            guard case .read = command else { throw ServiceError.conflict(code: "task_completed", message: "stream task \(id) has completed: both sides are closed") }
            return true
        }
        let reason = task.error.map { " (\($0.name): \($0.message))" } ?? ""
        throw ServiceError.conflict(code: "task_completed", message: "stream task \(id) has ended\(reason)")
    }

    /// Starts a stream task's connection (at creation or resume): no queue, no slot.
    func startStream(_ s: inout ServiceState, task id: Int, _ deliveries: inout Deliveries) {
        guard let entry = s.tasks[id], let session = s.sessions[entry.task.sessionId], !entry.inEngine else { return }
        guard let endpoint = StreamEndpoint(url: entry.task.originalRequest.url) else {
            complete(&s, task: id, error: TaskError(.badURL, "the stream's endpoint is unreadable"), body: nil, &deliveries)
            return
        }
        for action in transition(&s, task: id, .streamOpening) {
            guard action == .engine(.openStream) else {
                perform(action, task: id, &s, &deliveries)
                continue
            }
            s.tasks[id]?.task.currentRequest = entry.task.originalRequest
            s.tasks[id]?.inEngine = true
            var job = StreamJob(taskId: id, endpoint: endpoint)
            job.network = TransferNetwork(session.configuration)
            job.connectTimeout = entry.task.originalRequest.timeoutInterval
            engine.submit(.openStream(job))
        }
    }

    /// Applies a stream's update (engine thread, under the lock).
    func streamChanged(_ s: inout ServiceState, task id: Int, _ update: StreamUpdate, _ deliveries: inout Deliveries) {
        guard let entry = s.tasks[id] else { return }
        let session = entry.task.sessionId
        switch update {
        case .connected:
            perform(transition(&s, task: id, .streamConnected), task: id, &s, &deliveries)
        case .tlsStarted:
            // The current request shows what the connection is now: TLS.
            if var endpoint = StreamEndpoint(url: entry.task.originalRequest.url) {
                endpoint.tls = true
                s.tasks[id]?.task.currentRequest?.url = endpoint.url
            }
            changed(&s, task: id, persist: true, &deliveries)
        case .readClosed:
            emit(&s, session: session, task: id, .readClosed, [:], &deliveries)
        case .writeClosed:
            emit(&s, session: session, task: id, .writeClosed, [:], &deliveries)
        case .counts(let received, let sent):
            s.tasks[id]?.task.progress.bytesReceived = received
            s.tasks[id]?.task.progress.bytesSent = sent
            changed(&s, task: id, persist: false, &deliveries)
        case .finished:
            complete(&s, task: id, error: nil, body: nil, &deliveries)
        }
    }
}

extension TransferNetwork {
    /// A session's TLS settings (and proxies, which stream tasks do not use).
    init(_ configuration: SessionConfiguration) {
        self.init(
            proxies: configuration.connectionProxyDictionary,
            tlsMinimum: configuration.tlsMinimumSupportedProtocolVersion,
            tlsMaximum: configuration.tlsMaximumSupportedProtocolVersion,
            caBundle: configuration.tlsCABundle,
            pinnedPublicKeys: configuration.tlsPinnedPublicKeys,
            verifiesServerCertificate: configuration.tlsVerifiesServerCertificate)
    }
}
