internal import FoundationEssentials
internal import Curl
internal import TransferModel

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
    /// libcurl's redirect count when the last head came: a larger count at the end means that
    /// head's redirect was followed by a request that got no answer.
    private var redirectsAtHead = 0
    private(set) var finished: [TransactionMetrics] = []
    /// The TLS session seen while the request was being sent, for a head made only after the
    /// transfer ended (an FTP upload's), when libcurl has let go of the connection.
    private var tlsWhileSending: TLSSession?
    private var sendingChecked = false

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
        open = transaction(handle, now, hopStart: hopStart, url: url, method: method, statusCode: statusCode,
                           viaProxy: viaProxy, protocolName: protocolName)
        openBodyBytes = 0
        redirectsAtHead = handle.redirectCount
        previous = now
        tlsWhileSending = nil
        sendingChecked = false
    }

    /// The request body is being read: its connection is up, so its TLS session can be asked.
    mutating func sending(_ handle: EasyHandle) {
        guard !sendingChecked else { return }
        sendingChecked = true
        tlsWhileSending = handle.tlsSession
    }

    /// One transaction of the hop that began at `hopStart`, from the counters' growth since the
    /// previous head. `statusCode` nil: no answer came (the connection or the request failed,
    /// or the task ended first), so only the phases that completed have dates.
    private func transaction(_ handle: EasyHandle, _ now: Counters, hopStart: Double, url: String, method: String,
                             statusCode: Int?, viaProxy: Bool, protocolName: String?) -> TransactionMetrics {
        func date(_ offset: Double) -> MetricsDate { MetricsDate(start.addingTimeInterval(offset)) }
        func delta(_ phase: KeyPath<TransferTimes, Double>) -> Double { max(0, now.times[keyPath: phase] - previous.times[keyPath: phase]) }
        let answered = statusCode != nil
        let madeConnection = now.connections > previous.connections
        // Without an answer, a connection counts as made only once libcurl timed its connect,
        // and as reused only if the request went out on an old one.
        let connected = answered ? madeConnection : delta(\.connect) > 0
        let reused = answered ? !madeConnection : !connected && delta(\.preTransfer) > 0
        let lookedUp = !reused && (answered || delta(\.nameLookup) > 0)
        let requestSent = answered || delta(\.preTransfer) > 0
        let lookupEnd = hopStart + delta(\.nameLookup)
        let connectEnd = hopStart + delta(\.connect)
        let tlsEnd = delta(\.appConnect) > 0 ? hopStart + delta(\.appConnect) : nil
        let requestStart = hopStart + max(delta(\.preTransfer), delta(\.connect))
        let responseStart = max(requestStart, hopStart + delta(\.startTransfer))
        // libcurl reports "" and 0 for an address it never connected to.
        let remote = handle.primaryIP.flatMap { $0.isEmpty ? nil : $0 }
        let local = connected || reused ? handle.localIP.flatMap { $0.isEmpty ? nil : $0 } : nil
        // Only an answered request surely still has its connection to ask.
        let tls = answered ? handle.tlsSession ?? tlsWhileSending : nil
        return TransactionMetrics(
            request: .init(url: URLLogin.strip(url), method: method),  // never a Location's user and password
            response: statusCode.map { .init(statusCode: $0) },
            fetchStartDate: date(hopStart),
            domainLookupStartDate: reused ? nil : date(hopStart),
            domainLookupEndDate: lookedUp ? date(lookupEnd) : nil,
            connectStartDate: lookedUp ? date(lookupEnd) : nil,
            // As URLSession: the connection is up once TLS is, so connectEnd includes it.
            connectEndDate: connected ? date(max(connectEnd, tlsEnd ?? 0)) : nil,
            secureConnectionStartDate: connected ? tlsEnd.map { _ in date(connectEnd) } : nil,
            secureConnectionEndDate: connected ? tlsEnd.map(date) : nil,
            requestStartDate: requestSent ? date(requestStart) : nil,
            // libcurl does not say when the request's last byte went: its answer's first byte
            // bounds it (with no body the request is one write at requestStart). Unanswered,
            // it is unknown.
            requestEndDate: answered ? date(handle.bytesUploaded > 0 ? responseStart : requestStart) : nil,
            responseStartDate: answered ? date(responseStart) : nil,
            responseEndDate: nil,
            networkProtocolName: answered ? protocolName ?? handle.httpVersion : nil,
            negotiatedTLSProtocolVersion: tls.flatMap { TLSVersion(wireNumber: $0.protocolVersion) },
            negotiatedTLSCipherSuite: tls?.cipherSuite,
            isProxyConnection: viaProxy,
            isReusedConnection: reused,
            resourceFetchType: TransactionMetrics.networkLoad,
            remoteAddress: remote, remotePort: remote == nil ? nil : handle.primaryPort,
            localAddress: local, localPort: local == nil ? nil : handle.localPort,
            countOfRequestHeaderBytesSent: now.requestBytes - previous.requestBytes,
            countOfRequestBodyBytesSent: handle.bytesUploaded,
            countOfResponseHeaderBytesReceived: now.headerBytes - previous.headerBytes,
            countOfResponseBodyBytesReceived: 0)
    }

    /// Body bytes of the current response reached the task.
    mutating func bodyReceived(_ count: Int) { openBodyBytes += count }

    /// The transfer is over: the last transaction ends at libcurl's total time. A request that
    /// got no answer (the first one, or the one a followed redirect made) is a transaction
    /// without a response, as URLSession reports a failed connection. Returns every transaction
    /// of this transfer; `url`, `method` and `viaProxy` are the current request's.
    mutating func finish(_ handle: EasyHandle, url: String, method: String, viaProxy: Bool) -> [TransactionMetrics] {
        let now = Counters(handle)
        guard open == nil || handle.redirectCount > redirectsAtHead else {
            closeOpen(endingAt: now.times.total)
            return finished
        }
        let hopStart = handle.redirectCount > 0 ? now.times.redirect : 0
        closeOpen(endingAt: hopStart)
        // A transfer that never ran (cancelled while queued in the multi handle) made no request.
        guard now.times.total > hopStart || now.times.nameLookup > previous.times.nameLookup else { return finished }
        finished.append(transaction(handle, now, hopStart: hopStart, url: url, method: method, statusCode: nil,
                                    viaProxy: viaProxy, protocolName: nil))
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
