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
}
