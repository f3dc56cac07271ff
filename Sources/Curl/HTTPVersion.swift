internal import CCurl

/// Which HTTP versions a transfer may speak (`EasyOption.httpVersion`, CURLOPT_HTTP_VERSION).
/// - SeeAlso: https://curl.se/libcurl/c/CURLOPT_HTTP_VERSION.html
public enum HTTPVersion: Sendable, Equatable {
    /// HTTP/1.1 only: ALPN offers just "http/1.1".
    case http1_1
    /// h2 over TLS when ALPN agrees on it, HTTP/1.1 otherwise and over cleartext
    /// (CURL_HTTP_VERSION_2TLS, libcurl's default since 7.62).
    case http2OverTLS
    /// As `http2OverTLS`, and over cleartext an HTTP/1.1 request asking to upgrade to h2c
    /// (CURL_HTTP_VERSION_2_0).
    case http2
    /// h2 from the first byte, without ALPN or Upgrade, also over cleartext (h2c with prior
    /// knowledge, RFC 9113 3.3); a server that does not speak h2 fails the transfer.
    case http2PriorKnowledge

    var curlValue: Int {
        switch self {
        case .http1_1: Int(CURL_HTTP_VERSION_1_1)
        case .http2OverTLS: Int(CURL_HTTP_VERSION_2TLS)
        case .http2: Int(CURL_HTTP_VERSION_2_0)
        case .http2PriorKnowledge: Int(CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE)
        }
    }
}
