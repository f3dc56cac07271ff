internal import CCurl

/// Process-wide libcurl facts and set-up. `curl_global_init` is not thread-safe, so it runs
/// once, from a Swift `static let` (which Swift initialises exactly once, thread-safely).
public enum CurlLibrary {
    private static let initialised: Bool = curl_global_init(Int(CURL_GLOBAL_ALL)) == CURLE_OK

    /// Initialises libcurl if it was not yet; returns false if it could not be.
    @discardableResult
    public static func initialise() -> Bool { initialised }

    /// The libcurl version string, e.g. "libcurl/7.88.1 OpenSSL/3.0.15 ...".
    public static var version: String { String(cString: curl_version()) }

    /// LIBCURL_VERSION_NUM of the library loaded at run time (0xXXYYZZ), e.g. 0x075801 for 7.88.1.
    public static var versionNumber: Int { Int(curl_version_info(CURLVERSION_FIRST).pointee.version_num) }

    /// Whether a second transfer may use a cleartext h2 connection made with prior knowledge.
    /// Before 8.0 libcurl set up its HTTP/2 layer again on such a reused connection and failed
    /// the transfer with CURLE_HTTP2, "Error in the HTTP2 framing layer" (curl issue 10634, fixed
    /// by pull request 10643); measured here with 7.88.1 against nginx, in parallel and in turn.
    /// - SeeAlso: https://github.com/curl/curl/issues/10634
    public static var reusesPriorKnowledgeConnections: Bool { versionNumber >= 0x08_00_00 }
}
