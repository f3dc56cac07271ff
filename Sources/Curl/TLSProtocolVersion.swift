internal import CCurl

/// A TLS protocol version, for the bounds of `EasyOption.tlsVersions` (CURLOPT_SSLVERSION).
public enum TLSProtocolVersion: Sendable, Comparable {
    case tls1_0, tls1_1, tls1_2, tls1_3

    /// The CURL_SSLVERSION_* value that sets the lowest version allowed.
    var minimumValue: Int {
        switch self {
        case .tls1_0: CURL_SSLVERSION_TLSv1_0
        case .tls1_1: CURL_SSLVERSION_TLSv1_1
        case .tls1_2: CURL_SSLVERSION_TLSv1_2
        case .tls1_3: CURL_SSLVERSION_TLSv1_3
        }
    }

    /// The CURL_SSLVERSION_MAX_* value that sets the highest version allowed.
    var maximumValue: Int {
        switch self {
        case .tls1_0: CURL_SSLVERSION_MAX_TLSv1_0
        case .tls1_1: CURL_SSLVERSION_MAX_TLSv1_1
        case .tls1_2: CURL_SSLVERSION_MAX_TLSv1_2
        case .tls1_3: CURL_SSLVERSION_MAX_TLSv1_3
        }
    }
}
