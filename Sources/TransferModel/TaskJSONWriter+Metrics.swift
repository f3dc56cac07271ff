public import FoundationEssentials

/// A task's metrics, written byte for byte as `JSONCoding.encoder` writes them (keys sorted by
/// their UTF-8 bytes). Why: every completed task stores its metrics, and encoding them through
/// JSONEncoder was a third of the store writer's CPU per 16 KiB download. `TaskJSONTests` holds
/// this writer to the Codable form.
extension TaskJSONWriter {
    mutating func write(_ metrics: TaskMetrics) {
        open()
        key("redirectCount"); integer(metrics.redirectCount)
        key("taskInterval"); open()
        key("duration"); number(metrics.taskInterval.duration)
        key("start"); string(metrics.taskInterval.start.text)
        close()
        key("transactionMetrics"); list(metrics.transactionMetrics) { $0.write($1) }
        close()
    }

    private mutating func write(_ t: TransactionMetrics) {
        open()
        key("connectEndDate"); date(t.connectEndDate)
        key("connectStartDate"); date(t.connectStartDate)
        key("countOfRequestBodyBytesSent"); integer(t.countOfRequestBodyBytesSent)
        key("countOfRequestHeaderBytesSent"); integer(t.countOfRequestHeaderBytesSent)
        key("countOfResponseBodyBytesReceived"); integer(t.countOfResponseBodyBytesReceived)
        key("countOfResponseHeaderBytesReceived"); integer(t.countOfResponseHeaderBytesReceived)
        key("domainLookupEndDate"); date(t.domainLookupEndDate)
        key("domainLookupStartDate"); date(t.domainLookupStartDate)
        key("fetchStartDate"); date(t.fetchStartDate)
        key("isProxyConnection"); raw(t.isProxyConnection ? "true" : "false")
        key("isReusedConnection"); raw(t.isReusedConnection ? "true" : "false")
        key("localAddress"); string(t.localAddress)
        key("localPort"); integerOrNull(t.localPort)
        key("negotiatedTLSCipherSuite"); integerOrNull(t.negotiatedTLSCipherSuite)
        key("negotiatedTLSProtocolVersion"); string(t.negotiatedTLSProtocolVersion?.rawValue)
        key("networkProtocolName"); string(t.networkProtocolName)
        key("remoteAddress"); string(t.remoteAddress)
        key("remotePort"); integerOrNull(t.remotePort)
        key("request"); open()
        key("method"); string(t.request.method)
        key("url"); string(t.request.url)
        close()
        key("requestEndDate"); date(t.requestEndDate)
        key("requestStartDate"); date(t.requestStartDate)
        key("resourceFetchType"); string(t.resourceFetchType)
        key("response")
        if let response = t.response {
            open(); key("statusCode"); integer(response.statusCode); close()
        } else {
            null()
        }
        key("responseEndDate"); date(t.responseEndDate)
        key("responseStartDate"); date(t.responseStartDate)
        key("secureConnectionEndDate"); date(t.secureConnectionEndDate)
        key("secureConnectionStartDate"); date(t.secureConnectionStartDate)
        close()
    }

    private mutating func date(_ value: MetricsDate?) { string(value?.text) }
}

extension TaskMetrics {
    /// The metrics as JSON, as `JSONCoding.encoder` would write them (`TaskJSONWriter+Metrics`).
    public func jsonData() -> Data { json(omittingNulls: false) }

    /// The stored form: `jsonData()` without its null members (a transaction's phases that did
    /// not happen: DNS and connect on a reused connection, TLS over http). Every stored row is
    /// decoded before it is served, and the decoder takes a missing member as null.
    public func storedJSONData() -> Data { json(omittingNulls: true) }

    private func json(omittingNulls: Bool) -> Data {
        var writer = TaskJSONWriter(capacity: 256 + transactionMetrics.count * 900)
        writer.omitsNulls = omittingNulls
        writer.write(self)
        return writer.data()
    }
}
