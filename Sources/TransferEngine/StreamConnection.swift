internal import Curl
internal import FoundationEssentials
internal import Glibc
internal import TransferModel

/// One stream task's TCP (or TLS) connection and its two bounded buffers, on the engine thread.
///
/// libcurl makes the connection (CURLOPT_CONNECT_ONLY on http:// or https://host:port), then
/// bytes move with curl_easy_send/curl_easy_recv, non-blocking: received bytes wait in
/// `received` for reads (the socket is not read while it is full: TCP backpressure), written
/// bytes wait in `unsent` until the socket takes them. start-tls lets every byte written before
/// it go in plain text, then a second connect-only handle on https://host:port takes over a
/// duplicate of the connected socket and does the handshake (`beginUpgrade`). Owned by
/// `EngineLoop`; not Sendable.
final class StreamConnection {
    enum Phase { case connecting, open, upgrading }

    let job: StreamJob
    /// The handle bytes move through: the plain one, or the TLS one after start-tls.
    private(set) var handle: EasyHandle
    /// The TLS handle while its handshake runs over the adopted socket.
    private(set) var upgrade: EasyHandle?
    private(set) var phase = Phase.connecting
    private(set) var isTLS: Bool
    let startDate = Date()
    /// Measured connections (the plain one, then a TLS upgrade's), reported as the task ends.
    private(set) var transactions: [TransactionMetrics] = []

    var received = ByteQueue()
    var unsent = ByteQueue()
    var reads: [PendingRead] = []
    var writes: [PendingWrite] = []
    /// The peer closed its side; `endDelivered` once a read answered the last bytes.
    var peerClosed = false
    var endDelivered = false
    /// The client's close-read: received bytes are dropped, reads are refused.
    var readClosed = false
    var writeCloseRequested = false
    var writeClosed = false
    /// start-tls: its reply, and how many accepted bytes go before it, in plain text.
    var tlsRequest: (reply: @Sendable (StreamReply) -> Void, after: Int)?
    var tlsRequested = false
    /// Totals: bytes taken from writes, sent to the socket, received from it.
    var accepted = 0, sent = 0, receivedTotal = 0
    /// The counts last reported to the service.
    var reported = (received: 0, sent: 0)
    var lastCountsReport = -Double.infinity
    /// Whether the last send met CURLE_AGAIN (then the socket is watched for writability).
    var sendBlocked = false

    init(job: StreamJob) throws {
        self.job = job
        isTLS = job.endpoint.tls
        handle = try Self.makeHandle(job, tls: job.endpoint.tls)
    }

    /// A connect-only handle for the job's endpoint, with the session's TLS settings.
    private static func makeHandle(_ job: StreamJob, tls: Bool) throws -> EasyHandle {
        let handle = try EasyHandle()
        try handle.set(.url(job.endpoint.curlURL(tls: tls)))
        try handle.set(.connectOnly(true))
        // No proxy from the daemon's environment (a stream connects directly), no ALPN (it
        // speaks no HTTP), and curl's only timeout is the connect's.
        try handle.set(.proxy(""))
        try handle.set(.noProxy(""))
        try handle.set(.connectTimeoutMilliseconds(max(1, Int(job.connectTimeout * 1000))))
        guard tls else { return handle }
        try handle.set(.alpn(false))
        try job.network.applyTLS(to: handle)
        return handle
    }

    /// The plain connection (or TLS from the start) is up.
    func connected() {
        phase = .open
        transactions.append(measure(handle, tls: isTLS, received: 0, sent: 0))
    }

    /// Starts the TLS handshake over the connected socket: a TLS handle adopts a duplicate of
    /// it (the plain handle closes its own descriptor when it goes; the connection stays open
    /// through the duplicate). Returns the new handle to add to the multi handle.
    func beginUpgrade() throws -> EasyHandle {
        guard let socket = handle.activeSocket else { throw TaskError(.networkConnectionLost, "the connection is gone") }
        let duplicate = dup(socket)
        guard duplicate >= 0 else { throw TaskError(.unknown, "the socket could not be duplicated for TLS: errno \(errno)") }
        let tlsHandle: EasyHandle
        do {
            tlsHandle = try Self.makeHandle(job, tls: true)
        } catch {
            close(duplicate)
            throw error
        }
        try tlsHandle.adopt(socket: duplicate)
        upgrade = tlsHandle
        phase = .upgrading
        return tlsHandle
    }

    /// The TLS handshake finished: the TLS handle carries the stream; returns the plain handle,
    /// which the caller removes from the multi handle.
    func upgraded() -> EasyHandle {
        let plain = handle
        if let upgrade { handle = upgrade }
        upgrade = nil
        isTLS = true
        phase = .open
        transactions.append(measure(handle, tls: true, received: receivedTotal - transactionReceived, sent: sent - transactionSent))
        return plain
    }

    /// Totals at the last measured connection: each transaction counts its own bytes.
    private var transactionReceived = 0, transactionSent = 0

    /// The bytes of the last measured connection, filled in as the stream ends.
    func finishMetrics() -> [TransactionMetrics] {
        if var last = transactions.popLast() {
            last.countOfResponseBodyBytesReceived = receivedTotal - transactionReceived
            last.countOfRequestBodyBytesSent = sent - transactionSent
            transactions.append(last)
        }
        return transactions
    }

    private func measure(_ handle: EasyHandle, tls: Bool, received: Int, sent: Int) -> TransactionMetrics {
        if var previous = transactions.popLast() {
            previous.countOfResponseBodyBytesReceived = received
            previous.countOfRequestBodyBytesSent = sent
            transactions.append(previous)
        }
        transactionReceived = receivedTotal
        transactionSent = self.sent
        var endpoint = job.endpoint
        endpoint.tls = tls
        return StreamMetrics.transaction(handle, url: endpoint.url, start: startDate, tls: tls, adopted: !transactions.isEmpty)
    }

    /// The socket bytes move through now, while the stream is open.
    var socket: Int32? { phase == .open ? handle.activeSocket : nil }
}

extension StreamEndpoint {
    /// The URL curl connects with: http for a plain connection, https for TLS (curl speaks no
    /// HTTP on it: the handle only connects).
    func curlURL(tls: Bool) -> String { "\(tls ? "https" : "http")://\(urlHost):\(port)/" }
}
