internal import Curl
package import FoundationEssentials
internal import Synchronization
internal import TransferEngine

/// Passes a client's request on to another node of the cluster and hands its answer back
/// (issue 19): for an ephemeral session and its tasks, which live only in the memory of the node
/// that made them (`EphemeralRoutes`), so that any node answers for them as for every other
/// session.
///
/// Execution: each exchange is one blocking libcurl easy transfer on a thread of its own (a
/// passed-on event long-poll waits as long as the client asked), at most `maxInFlight` at once;
/// no HTTP worker waits for it (the route answers later). The answer's body goes on to the
/// client as it arrives (`ForwardedAnswerSink`: its writes may block this thread while the
/// client is slow, so memory stays bounded whatever the size, a big ephemeral download included).
///
/// Connections: to an address from the nodes' registry, never a tenant's URL, so they do not
/// pass the tenants' network policy: plain http, no proxy, no redirects. The request keeps the
/// client's Authorization (or file grant) and the holder checks it as for its own clients, so
/// this node decides nothing about the tenant. A request passed on once carries `header` and is
/// never passed on again (no loops between nodes that disagree about a route).
package final class NodeForwarding: Sendable {
    package static let header = "X-Transferd-Forwarded"
    static let maxInFlight = 64

    private let inFlight = Atomic<Int>(0)
    /// `onThread`'s threads running, at most `maxThreads`.
    private let threads = Atomic<Int>(0)
    static let maxThreads = 16

    package init() {}

    /// A request as it is passed on.
    package struct Exchange: Sendable {
        package var method: String
        /// Path and query, already encoded.
        package var target: String
        package var headers: [(name: String, value: String)]
        package var body: Data
        /// How long the holder may take (a long-poll's wait plus a margin).
        package var timeout: Double

        package init(method: String, target: String, headers: [(name: String, value: String)], body: Data, timeout: Double) {
            self.method = method
            self.target = target
            self.headers = headers
            self.body = body
            self.timeout = timeout
        }
    }

    /// Why no answer came back.
    package enum Failure: Error, Sendable, Equatable {
        /// `maxInFlight` exchanges are running.
        case busy
        /// The node could not be reached or did not answer in time.
        case unreachable(String)
    }

    /// Sends `exchange` to `address` (host:port) on a thread of its own, where `sink` hears the
    /// answer (or the failure before one).
    package func forward(_ exchange: Exchange, to address: String, sink: any ForwardedAnswerSink) {
        guard inFlight.add(1, ordering: .relaxed).newValue <= Self.maxInFlight else {
            inFlight.subtract(1, ordering: .relaxed)
            return sink.failed(.busy)
        }
        DedicatedThread.start { [self] in
            defer { inFlight.subtract(1, ordering: .relaxed) }
            Self.exchange(exchange, address: address, sink: sink)
        }
    }

    /// Runs `body` on a thread of its own (a list that asks several nodes, one after the other);
    /// false, and nothing run, when `maxThreads` such threads are running.
    package func onThread(_ body: @escaping @Sendable () -> Void) -> Bool {
        guard threads.add(1, ordering: .relaxed).newValue <= Self.maxThreads else {
            threads.subtract(1, ordering: .relaxed)
            return false
        }
        DedicatedThread.start { [self] in
            defer { threads.subtract(1, ordering: .relaxed) }
            body()
        }
        return true
    }

    /// Sends `exchange` to `address` on the calling thread (one of its own, never an HTTP
    /// worker) and returns the whole answer; an answer longer than `limit` bytes is a failure.
    package func fetch(_ exchange: Exchange, from address: String, limit: Int) throws(Failure) -> (status: Int, body: Data) {
        guard inFlight.add(1, ordering: .relaxed).newValue <= Self.maxInFlight else {
            inFlight.subtract(1, ordering: .relaxed)
            throw .busy
        }
        defer { inFlight.subtract(1, ordering: .relaxed) }
        let answer = CollectedAnswer(limit: limit)
        Self.exchange(exchange, address: address, sink: answer)
        return try answer.result()
    }

    /// An answer kept whole in memory, for `fetch`.
    private final class CollectedAnswer: ForwardedAnswerSink {
        private struct State {
            var status = 0
            var body = Data()
            var outcome: Result<Void, Failure>?
        }
        private let limit: Int
        private let state = Mutex(State())

        init(limit: Int) { self.limit = limit }

        func head(status: Int, headers: [(name: String, value: String)], length: Int?) {
            state.withLock { $0.status = status }
        }

        func body(_ bytes: UnsafeRawBufferPointer) -> Bool {
            state.withLock { s in
                guard s.body.count + bytes.count <= limit else {
                    s.outcome = .failure(.unreachable("the answer is longer than \(limit) bytes"))
                    return false
                }
                s.body.append(contentsOf: bytes)
                return true
            }
        }

        func end(complete: Bool) {
            state.withLock { s in
                if s.outcome == nil { s.outcome = complete ? .success(()) : .failure(.unreachable("the answer was cut short")) }
            }
        }

        func failed(_ failure: Failure) { state.withLock { $0.outcome = .failure(failure) } }

        func result() throws(Failure) -> (status: Int, body: Data) {
            let s = state.withLock { $0 }
            switch s.outcome {
            case .success?: return (s.status, s.body)
            case .failure(let failure)?: throw failure
            case nil: throw .unreachable("no answer")
            }
        }
    }

    /// Hop-by-hop and framing headers: curl and the server set their own.
    fileprivate static let notPassed: Set<String> = ["connection", "keep-alive", "transfer-encoding", "content-length", "host", "expect",
                                                     "te", "trailer", "upgrade", "proxy-authorization", "proxy-connection", "date"]

    private static func exchange(_ exchange: Exchange, address: String, sink: any ForwardedAnswerSink) {
        let collector = AnswerCollector(sink: sink)
        do {
            let handle = try EasyHandle()
            handle.delegate = collector
            try handle.set(.url("http://\(address)\(exchange.target)"))
            try handle.set(.allowedProtocols("http"))
            try handle.set(.followRedirects(false))
            try handle.set(.proxy(""))
            try handle.set(.noProxy("*"))
            try handle.set(.connectTimeoutMilliseconds(5_000))
            // A whole answer may take long (a big file to a slow client); a stalled one may not.
            try handle.set(.lowSpeed(bytesPerSecond: 1, seconds: Int(exchange.timeout)))
            try handle.set(.acceptEncoding(nil))
            var lines = exchange.headers.filter { !notPassed.contains($0.name.lowercased()) }.map { "\($0.name): \($0.value)" }
            lines += ["\(header): 1", "Expect:"]
            try handle.set(.headers(lines))
            switch exchange.method {
            case "GET": break
            case "HEAD": try handle.set(.noBody(true))
            default:
                try handle.set(.customRequest(exchange.method))
                try handle.set(.body(exchange.body))
            }
            let code = handle.perform()
            collector.finish(ok: code == .ok, reason: handle.errorMessage ?? "\(code)")
        } catch {
            collector.finish(ok: false, reason: "\(error)")
        }
    }

    /// The answer as curl hands it over, on the exchange's thread: the head once the final one
    /// is complete, then the body to the sink.
    private final class AnswerCollector: EasyHandleDelegate {
        let sink: any ForwardedAnswerSink
        var status: Int?
        var headers: [(name: String, value: String)] = []
        var length: Int?
        var headSent = false
        var stopped = false

        init(sink: any ForwardedAnswerSink) { self.sink = sink }

        func easyHandle(_ handle: EasyHandle, didReceiveHeaderLine line: String) -> Bool {
            if line.hasPrefix("HTTP/") {
                // A new status line (after a 100 Continue): the headers start over.
                status = line.split(separator: " ").dropFirst().first.flatMap { Int($0) }
                headers = []
                length = nil
            } else if line.isEmpty {
                if let status, status >= 200, !headSent {
                    headSent = true
                    sink.head(status: status, headers: headers, length: length)
                }
            } else if let colon = line.firstIndex(of: ":") {
                let name = String(line[..<colon])
                let raw = line[line.index(after: colon)...].drop { $0 == " " || $0 == "\t" }
                let value = String(raw.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
                if name.lowercased() == "content-length" { length = Int(value) }
                guard !NodeForwarding.notPassed.contains(name.lowercased()) else { return true }
                headers.append((name, value))
            }
            return true
        }

        func easyHandle(_ handle: EasyHandle, didReceive bytes: RawSpan) -> WriteDisposition {
            let taken = bytes.withUnsafeBytes { sink.body($0) }
            if !taken { stopped = true }
            return taken ? .accept : .fail
        }

        func easyHandle(_ handle: EasyHandle, progress: TransferCounters) -> Bool { true }

        func finish(ok: Bool, reason: String) {
            if headSent {
                sink.end(complete: ok && !stopped)
            } else {
                sink.failed(.unreachable(reason))
            }
        }
    }
}

/// Where a passed-on answer goes (the API's streamed response). Called on the exchange's thread:
/// `head` once, then `body` for each chunk (it may block until the client took earlier bytes;
/// false stops the exchange: the client went away), then `end`; or only `failed`, before any head.
package protocol ForwardedAnswerSink: Sendable {
    func head(status: Int, headers: [(name: String, value: String)], length: Int?)
    func body(_ bytes: UnsafeRawBufferPointer) -> Bool
    func end(complete: Bool)
    func failed(_ failure: NodeForwarding.Failure)
}
