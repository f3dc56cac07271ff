internal import CCurl

/// Why libcurl could not use a proxy (CURLINFO_PROXY_ERROR, a CURLproxycode), in the terms the
/// domain needs: a SOCKS server that wants credentials it did not get or refused them, or
/// anything else. - SeeAlso: https://curl.se/libcurl/c/CURLINFO_PROXY_ERROR.html
public enum ProxyFailure: Sendable, Equatable {
    /// The SOCKS5 server accepts none of the authentication methods offered (none, or
    /// username/password when credentials were set): CURLPX_NO_AUTH.
    case authenticationRequired
    /// The SOCKS5 server rejected the username and password: CURLPX_USER_REJECTED.
    case credentialsRejected
    /// Any other CURLproxycode (unreachable target, bad reply, ...).
    case other(Int)

    init?(_ code: Int) {
        switch code {
        case Int(CURLPX_OK.rawValue): return nil
        case Int(CURLPX_NO_AUTH.rawValue): self = .authenticationRequired
        case Int(CURLPX_USER_REJECTED.rawValue): self = .credentialsRejected
        default: self = .other(code)
        }
    }
}
