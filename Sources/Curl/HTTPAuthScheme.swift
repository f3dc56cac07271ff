/// The HTTP authentication schemes transferd lets libcurl answer a 401 with (CURLOPT_HTTPAUTH).
/// One scheme at a time: the caller chose it from the server's challenge.
/// - SeeAlso: https://curl.se/libcurl/c/CURLOPT_HTTPAUTH.html
public enum HTTPAuthScheme: Sendable {
    /// Sent with the first request (a single scheme is "used instantly").
    case basic
    /// Answered after the server's 401 gives the nonce; libcurl keeps the 401's body from the
    /// write callback (it reads it as "ignore body") and sends the request again itself.
    case digest

    /// curl.h defines the bits with casts (`((unsigned long)1)<<0`), which Swift does not
    /// import: CURLAUTH_BASIC is 1 << 0, CURLAUTH_DIGEST 1 << 1 (part of libcurl's ABI).
    var bitmask: Int {
        switch self {
        case .basic: return 1 << 0
        case .digest: return 1 << 1
        }
    }
}
