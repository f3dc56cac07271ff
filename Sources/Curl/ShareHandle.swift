internal import CCurl

/// A libcurl share handle holding a connection cache of its own (CURL_LOCK_DATA_CONNECT): easy
/// handles that use it take and return connections there instead of in their multi handle's
/// cache, so a group of transfers (a session) can be given a pool no other transfer touches.
///
/// Not Sendable: created, used and closed on the thread that owns the multi handle. A share used
/// by one thread needs no lock callbacks. Tear-down is explicit (`close()`), never in deinit.
/// - SeeAlso: https://curl.se/libcurl/c/CURLSHOPT_SHARE.html
public final class ShareHandle {
    private(set) var raw: UnsafeMutableRawPointer?

    public init() throws(CurlCode) {
        CurlLibrary.initialise()
        guard let raw = curl_share_init() else { throw CurlCode.outOfMemory }
        let code = transferd_share_setopt_long(raw, CURLSHOPT_SHARE, Int(CURL_LOCK_DATA_CONNECT.rawValue))
        guard code == CURLSHE_OK else {
            curl_share_cleanup(raw)
            throw CurlCode.outOfMemory
        }
        self.raw = raw
    }

    /// Frees the share and closes the connections in its cache. Returns false, doing nothing,
    /// while an easy handle still uses it (curl_share_cleanup answers CURLSHE_IN_USE until every
    /// such handle is cleaned up); true once closed, and on every later call.
    /// - SeeAlso: https://curl.se/libcurl/c/curl_share_cleanup.html
    @discardableResult
    public func close() -> Bool {
        guard let raw else { return true }
        guard curl_share_cleanup(raw) == CURLSHE_OK else { return false }
        self.raw = nil
        return true
    }
}
