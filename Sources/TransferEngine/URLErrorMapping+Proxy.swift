internal import Curl
internal import TransferModel

extension URLErrorMapping {
    /// How a failure at the proxy reads: 407 (or 401) to a CONNECT, or a SOCKS5 server that wants or
    /// refused credentials, is userAuthenticationRequired (-1013), as a download's 407 is; a
    /// CONNECT refused with another status is cannotConnectToHost (-1004). nil: not the proxy's
    /// doing (or no proxy), the plain table applies. Messages name the proxy, never credentials.
    static func proxyError(connectStatus: Int, failure: ProxyFailure?, route: ProxyRoute?) -> TaskError? {
        guard let route else { return nil }
        let proxy = "the proxy \(route.host):\(route.port)"
        // 407 is the standard answer; tinyproxy 1.11 answers wrong credentials with 401.
        if connectStatus == 407 || connectStatus == 401 {
            let why = route.username == nil ? "it requires credentials and the session has none" : "it refused the session's credentials"
            return TaskError(.userAuthenticationRequired, "\(proxy) answered CONNECT with \(connectStatus): \(why)")
        }
        if connectStatus >= 300 {
            return TaskError(.cannotConnectToHost, "\(proxy) refused the tunnel: it answered CONNECT with \(connectStatus)")
        }
        switch failure {
        case .authenticationRequired:
            return TaskError(.userAuthenticationRequired, "\(proxy) (SOCKS5) requires a username and password the session does not have")
        case .credentialsRejected:
            return TaskError(.userAuthenticationRequired, "\(proxy) (SOCKS5) rejected the session's username and password")
        case .other, nil:
            return nil
        }
    }
}
