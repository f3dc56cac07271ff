internal import FoundationEssentials
internal import Curl

/// Turns libcurl's per-transfer counters into one `TransactionMetrics` per response head.
/// libcurl follows redirects itself and sums each phase time over the hops (each hop's part
/// counted from that hop's start), and sums the head byte counts and connections made: so
/// each hop's values are the difference from what was read at the previous head, and a hop
/// starts when the latest redirect was followed (CURLINFO_REDIRECT_TIME_T). Dates are these
/// offsets from `start`, the wall clock when the transfer was created (libcurl's own clock
/// starts at its first perform, in the same engine loop turn). Owned by one `Transfer`.
struct TransactionRecorder {
    private let start: Date
    /// Counters read at the previous head.
    private var previous = Counters()
    /// The transaction whose head came last, waiting for its end.
    private var open: TransactionMetrics?
    private var openBodyBytes = 0
    private(set) var finished: [TransactionMetrics] = []

    init(start: Date = Date()) {
        self.start = start
    }

    /// libcurl's running totals, as one snapshot.
    private struct Counters {
        var times = TransferTimes()
        var headerBytes = 0
        var requestBytes = 0
        var connections = 0

        init() {}

        init(_ handle: EasyHandle) {
            times = handle.times
            headerBytes = handle.headerBytesReceived
            requestBytes = handle.requestBytesSent
            connections = handle.connectionsMade
        }
    }

    /// A final head (not 1xx) arrived for the request to `url`: the previous transaction (a
    /// redirect) ends where this hop began, and this one is opened.
    /// `protocolName` names a protocol without an HTTP version (ftp, ftps, sftp).
    mutating func headArrived(_ handle: EasyHandle, url: String, method: String, statusCode: Int, viaProxy: Bool, protocolName: String? = nil) {
        let now = Counters(handle)
        let hopStart = handle.redirectCount > 0 ? now.times.redirect : 0
        closeOpen(endingAt: hopStart)
        func date(_ offset: Double) -> MetricsDate { MetricsDate(start.addingTimeInterval(offset)) }
        func delta(_ phase: KeyPath<TransferTimes, Double>) -> Double { max(0, now.times[keyPath: phase] - previous.times[keyPath: phase]) }
        let reused = now.connections - previous.connections == 0
        let lookupEnd = hopStart + delta(\.nameLookup)
        let connectEnd = hopStart + delta(\.connect)
        let tlsEnd = delta(\.appConnect) > 0 ? hopStart + delta(\.appConnect) : nil
        let requestStart = hopStart + max(delta(\.preTransfer), delta(\.connect))
        let responseStart = max(requestStart, hopStart + delta(\.startTransfer))
        open = TransactionMetrics(
            request: .init(url: url, method: method),
            response: .init(statusCode: statusCode),
            fetchStartDate: date(hopStart),
            domainLookupStartDate: reused ? nil : date(hopStart),
            domainLookupEndDate: reused ? nil : date(lookupEnd),
            connectStartDate: reused ? nil : date(lookupEnd),
            // As URLSession: the connection is up once TLS is, so connectEnd includes it.
            connectEndDate: reused ? nil : date(max(connectEnd, tlsEnd ?? 0)),
            secureConnectionStartDate: reused ? nil : tlsEnd.map { _ in date(connectEnd) },
            secureConnectionEndDate: reused ? nil : tlsEnd.map(date),
            requestStartDate: date(requestStart),
            // libcurl does not say when the request's last byte went: its answer's first byte
            // bounds it (with no body the request is one write at requestStart).
            requestEndDate: date(handle.bytesUploaded > 0 ? responseStart : requestStart),
            responseStartDate: date(responseStart),
            responseEndDate: nil,
            networkProtocolName: protocolName ?? handle.httpVersion,
            isProxyConnection: viaProxy,
            isReusedConnection: reused,
            resourceFetchType: "networkLoad",
            remoteAddress: handle.primaryIP, remotePort: handle.primaryPort,
            localAddress: handle.localIP, localPort: handle.localPort,
            countOfRequestHeaderBytesSent: now.requestBytes - previous.requestBytes,
            countOfRequestBodyBytesSent: handle.bytesUploaded,
            countOfResponseHeaderBytesReceived: now.headerBytes - previous.headerBytes,
            countOfResponseBodyBytesReceived: 0)
        openBodyBytes = 0
        previous = now
    }

    /// Body bytes of the current response reached the task.
    mutating func bodyReceived(_ count: Int) { openBodyBytes += count }

    /// The transfer is over: the last transaction ends at libcurl's total time. Returns every
    /// transaction of this transfer.
    mutating func finish(_ handle: EasyHandle) -> [TransactionMetrics] {
        closeOpen(endingAt: handle.times.total)
        return finished
    }

    private mutating func closeOpen(endingAt offset: Double) {
        guard var transaction = open else { return }
        let end = MetricsDate(start.addingTimeInterval(offset))
        transaction.responseEndDate = max(end, transaction.responseStartDate ?? end)
        transaction.countOfResponseBodyBytesReceived = openBodyBytes
        finished.append(transaction)
        open = nil
    }
}
