internal import Curl
internal import FoundationEssentials
internal import TransferModel

/// A stream connection as a `TransactionMetrics`: its lookup, connect and TLS dates from
/// libcurl's phase times (offsets from `start`), its addresses; no request or response (a stream
/// speaks no HTTP). A start-tls upgrade is a second transaction on the same socket: no lookup
/// or connect, only its TLS handshake.
enum StreamMetrics {
    static func transaction(_ handle: EasyHandle, url: String, start: Date, tls: Bool, adopted: Bool) -> TransactionMetrics {
        let times = handle.times
        let fetchStart = adopted ? Date().addingTimeInterval(-times.total) : start
        func date(_ offset: Double) -> MetricsDate { MetricsDate(fetchStart.addingTimeInterval(offset)) }
        let tlsEnd = tls && times.appConnect > 0 ? times.appConnect : nil
        return TransactionMetrics(
            request: .init(url: url, method: tls && adopted ? "STARTTLS" : "CONNECT"),
            response: nil,
            fetchStartDate: date(0),
            domainLookupStartDate: adopted ? nil : date(0),
            domainLookupEndDate: adopted ? nil : date(times.nameLookup),
            connectStartDate: adopted ? nil : date(times.nameLookup),
            connectEndDate: adopted ? nil : date(max(times.connect, tlsEnd ?? 0)),
            secureConnectionStartDate: tlsEnd.map { _ in date(adopted ? 0 : times.connect) },
            secureConnectionEndDate: tlsEnd.map(date),
            requestStartDate: nil, requestEndDate: nil, responseStartDate: nil, responseEndDate: nil,
            networkProtocolName: nil,
            isProxyConnection: false,
            isReusedConnection: adopted,
            resourceFetchType: TransactionMetrics.networkLoad,
            remoteAddress: handle.primaryIP, remotePort: handle.primaryPort,
            localAddress: handle.localIP, localPort: handle.localPort,
            countOfRequestHeaderBytesSent: 0,
            countOfRequestBodyBytesSent: 0,
            countOfResponseHeaderBytesReceived: 0,
            countOfResponseBodyBytesReceived: 0)
    }
}
