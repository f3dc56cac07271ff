/// The phase times libcurl measured for a transfer, in seconds since the transfer started
/// (CURLINFO_*_TIME_T, microseconds in C). With redirects followed by libcurl, every phase time
/// but `total` and `redirect` is a sum over the hops, each hop's part counted from that hop's
/// own start; `redirect` is when the latest redirect was followed. A value type read from an
/// `EasyHandle` by its owner; it carries no handle.
/// - SeeAlso: https://curl.se/libcurl/c/curl_easy_getinfo.html#TIMES
public struct TransferTimes: Sendable, Equatable {
    public var nameLookup = 0.0
    public var connect = 0.0
    /// The TLS handshake's end (0 without TLS).
    public var appConnect = 0.0
    /// Just before the request went out.
    public var preTransfer = 0.0
    /// The first response byte.
    public var startTransfer = 0.0
    public var total = 0.0
    public var redirect = 0.0

    public init() {}
}
