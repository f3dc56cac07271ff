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
/// no HTTP worker waits for it (the route answers later).
///
/// Connections: to an address from the nodes' registry, never a tenant's URL, so they do not
/// pass the tenants' network policy: plain http, no proxy, no redirects. The request keeps the
/// client's Authorization (or file grant) and the holder checks it as for its own clients, so
/// this node decides nothing about the tenant. A request passed on once carries `header` and is
/// never passed on again (no loops between nodes that disagree about a route).
package final class NodeForwarding: Sendable {
    package static let header = "X-Transferd-Forwarded"
    static let maxInFlight = 64
    /// An answer larger than this (a big ephemeral download's file) is refused with a 502 that
    /// names the node to ask; buffering it whole is what keeps this simple.
    static let maxAnswerBytes = 64 << 20

    private let inFlight = Atomic<Int>(0)

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

    /// The holder's answer, as it gave it.
    package struct Answer: Sendable {
        package var status: Int
        package var headers: [(name: String, value: String)]
        package var body: Data
    }

    /// Why no answer came back.
    package enum Failure: Error, Sendable, Equatable {
        /// `maxInFlight` exchanges are running.
        case busy
        /// The node could not be reached or did not answer in time.
        case unreachable(String)
        /// Its answer is larger than `maxAnswerBytes`.
        case tooLarge
    }

    /// Sends `exchange` to `address` (host:port) on a thread of its own; `done` runs there.
    package func forward(_ exchange: Exchange, to address: String, done: @escaping @Sendable (Result<Answer, Failure>) -> Void) {
        guard inFlight.add(1, ordering: .relaxed).newValue <= Self.maxInFlight else {
            inFlight.subtract(1, ordering: .relaxed)
            return done(.failure(.busy))
        }
        DedicatedThread.start { [self] in
            defer { inFlight.subtract(1, ordering: .relaxed) }
            done(Self.exchange(exchange, address: address))
        }
    }

    /// Hop-by-hop and framing headers: curl and the server set their own.
    private static let notPassed: Set<String> = ["connection", "keep-alive", "transfer-encoding", "content-length", "host", "expect",
                                                 "te", "trailer", "upgrade", "proxy-authorization", "proxy-connection", "date"]

    private static func exchange(_ exchange: Exchange, address: String) -> Result<Answer, Failure> {
        let collector = AnswerCollector()
        do {
            let handle = try EasyHandle()
            handle.delegate = collector
            try handle.set(.url("http://\(address)\(exchange.target)"))
            try handle.set(.allowedProtocols("http"))
            try handle.set(.followRedirects(false))
            try handle.set(.proxy(""))
            try handle.set(.noProxy("*"))
            try handle.set(.connectTimeoutMilliseconds(5_000))
            try handle.set(.timeoutMilliseconds(Int(exchange.timeout * 1000)))
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
            if collector.tooLarge { return .failure(.tooLarge) }
            guard code == .ok, let status = collector.status else {
                return .failure(.unreachable(handle.errorMessage ?? "\(code)"))
            }
            return .success(Answer(status: status, headers: collector.headers, body: collector.body))
        } catch {
            return .failure(.unreachable("\(error)"))
        }
    }

    /// The answer as curl hands it over, on the exchange's thread.
    private final class AnswerCollector: EasyHandleDelegate {
        var status: Int?
        var headers: [(name: String, value: String)] = []
        var body = Data()
        var tooLarge = false

        func easyHandle(_ handle: EasyHandle, didReceiveHeaderLine line: String) -> Bool {
            if line.hasPrefix("HTTP/") {
                // A new status line (after a 100 Continue): the headers start over.
                status = line.split(separator: " ").dropFirst().first.flatMap { Int($0) }
                headers = []
            } else if let colon = line.firstIndex(of: ":") {
                let name = String(line[..<colon])
                guard !NodeForwarding.notPassed.contains(name.lowercased()) else { return true }
                let value = line[line.index(after: colon)...].drop { $0 == " " || $0 == "\t" }
                headers.append((name, String(value.reversed().drop { $0 == " " || $0 == "\t" }.reversed())))
            }
            return true
        }

        func easyHandle(_ handle: EasyHandle, didReceive bytes: RawSpan) -> WriteDisposition {
            guard body.count + bytes.byteCount <= NodeForwarding.maxAnswerBytes else {
                tooLarge = true
                return .fail
            }
            bytes.withUnsafeBytes { body.append(contentsOf: $0) }
            return .accept
        }

        func easyHandle(_ handle: EasyHandle, progress: TransferCounters) -> Bool { true }
    }
}
