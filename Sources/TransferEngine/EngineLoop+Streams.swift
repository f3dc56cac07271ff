internal import Curl
internal import TransferModel

/// Stream tasks on the engine thread: their connect-only handles live in the multi handle like
/// any transfer's, their sockets are watched by the same wait (`streamWatches`), and their
/// bytes move in `pumpStreams` after each wait. See `StreamConnection`.
extension EngineLoop {
    func openStream(_ job: StreamJob) {
        let taskId = job.taskId
        guard streams.connections[taskId] == nil else { return }
        do {
            let stream = try StreamConnection(job: job)
            try multi.add(stream.handle)
            streams.connections[taskId] = stream
            streams.handles[ObjectIdentifier(stream.handle)] = taskId
            observer.transfer(taskId, .connecting)
        } catch {
            observer.transfer(taskId, .completed(.failure(URLErrorMapping.setupError(error, "the stream could not be opened"))))
        }
    }

    func applyStream(_ command: StreamCommand) {
        guard let stream = streams.connections[command.taskId] else {
            command.reply(.refused(code: "stream_not_open", message: "task \(command.taskId) has no open connection"))
            return
        }
        stream.accept(command, now: Self.now())
        streams.dirty.insert(command.taskId)
    }

    /// A stream's connect-only handle finished: connected (or the TLS upgrade handshaked), or failed.
    /// Returns false when `easy` is no stream's.
    func streamHandleDone(_ easy: EasyHandle, _ code: CurlCode) -> Bool {
        guard let taskId = streams.handles[ObjectIdentifier(easy)] else { return false }
        guard let stream = streams.connections[taskId] else { return true }
        guard code.isOK else {
            endStream(taskId, URLErrorMapping.policyError(code, easy) ?? URLErrorMapping.error(for: code, detail: easy.errorMessage))
            return true
        }
        if easy === stream.upgrade {
            let plain = stream.upgraded()
            streams.handles[ObjectIdentifier(plain)] = nil
            multi.remove(plain)  // closes its descriptor; the TLS handle's duplicate keeps the connection
            stream.tlsRequest?.reply(.done)
            stream.tlsRequest = nil
            observer.transfer(taskId, .stream(.tlsStarted))
        } else {
            stream.connected()
            observer.transfer(taskId, .stream(.connected))
        }
        streams.dirty.insert(taskId)
        return true
    }

    /// Moves bytes on the streams whose socket is ready, that got a command, or whose waiting
    /// read or write reached its deadline.
    func pumpStreams() {
        guard !streams.connections.isEmpty else { return }
        let now = Self.now()
        var due = streams.dirty
        streams.dirty.removeAll()
        for (taskId, stream) in streams.connections where (stream.nextWake ?? .infinity) <= now { due.insert(taskId) }
        for taskId in due {
            guard let stream = streams.connections[taskId] else { continue }
            var updates: [StreamUpdate] = []
            let step = stream.pump(now: now, updates: &updates)
            for update in updates { observer.transfer(taskId, .stream(update)) }
            switch step {
            case .running:
                break
            case .finished:
                endStream(taskId, nil)
            case .failed(let error):
                endStream(taskId, error)
            case .upgrade:
                do {
                    let tlsHandle = try stream.beginUpgrade()
                    try multi.add(tlsHandle)
                    streams.handles[ObjectIdentifier(tlsHandle)] = taskId
                } catch let error as TaskError {
                    endStream(taskId, error)
                } catch {
                    endStream(taskId, TaskError(.secureConnectionFailed, "TLS could not start: \(error)"))
                }
            }
        }
    }

    /// The sockets the wait watches for the streams, remembering whose each is.
    func streamWatches() -> [SocketWatch] {
        streams.sockets.removeAll(keepingCapacity: true)
        var watches: [SocketWatch] = []
        for (taskId, stream) in streams.connections {
            guard let watch = stream.watch else { continue }
            streams.sockets[watch.socket] = taskId
            watches.append(watch)
        }
        return watches
    }

    /// The streams whose sockets the wait found ready get pumped next.
    func streamsReady(_ ready: [SocketReadiness]) {
        for socket in ready { if let taskId = streams.sockets[socket.socket] { streams.dirty.insert(taskId) } }
    }

    /// Seconds until a stream next needs a pump by itself (`StreamConnection.nextWake`), if any.
    func streamTimeout(now: Double) -> Double? {
        streams.connections.values.compactMap(\.nextWake).min().map { max(0, $0 - now) }
    }

    /// Ends a stream task with `error` (nil: both sides closed cleanly): its handles leave the
    /// multi handle (closing the connection), what waits on it is answered, its connections'
    /// metrics and then its completion are reported.
    func endStream(_ taskId: Int, _ error: TaskError?) {
        guard let stream = streams.connections.removeValue(forKey: taskId) else { return }
        streams.dirty.remove(taskId)
        for easy in [stream.handle, stream.upgrade].compactMap({ $0 }) {
            streams.handles[ObjectIdentifier(easy)] = nil
            multi.remove(easy)
        }
        stream.answerAll(error.map { .failed($0) } ?? .read([], ended: true))
        var updates: [StreamUpdate] = []
        stream.reportCounts(now: Self.now(), &updates)  // the final totals, before the completion
        for update in updates { observer.transfer(taskId, .stream(update)) }
        let transactions = stream.finishMetrics()
        if !transactions.isEmpty { observer.transfer(taskId, .transactions(transactions)) }
        observer.transfer(taskId, error.map { .completed(.failure($0)) } ?? .stream(.finished))
    }
}

/// The engine loop's stream tasks: their connections, which handle and socket is whose, and
/// which need pumping. Engine thread only.
final class StreamTable {
    var connections: [Int: StreamConnection] = [:]
    var handles: [ObjectIdentifier: Int] = [:]
    var sockets: [Int32: Int] = [:]
    var dirty: Set<Int> = []
}
