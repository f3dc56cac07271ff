internal import FoundationEssentials
internal import Curl
internal import TransferModel

/// Proxies and TLS on the easy handle: decided in Swift per request (a redirect to another
/// host or scheme may take another proxy, or none), so curl's own environment and no_proxy
/// handling never applies.
extension Transfer {
    func configureNetwork() throws {
        // Bypasses are decided here; "" also keeps curl from reading no_proxy.
        try handle.set(.noProxy(""))
        // A CONNECT answer is the proxy's, not the origin's response.
        try handle.set(.suppressConnectHeaders(true))
        try route(to: job.request.url)
        try job.network.applyTLS(to: handle)
        if let accepted = job.acceptedServerTrust, ChallengeOrigin(url: job.request.url) == accepted.origin {
            // The client accepted this server's key (a server-trust decision): the chain is not
            // verified, the key is, on every connection this transfer makes.
            try handle.set(.verifyServerCertificate(false))
            try handle.set(.pinnedPublicKeys(accepted.pin))
        }
        try configureHTTPVersion(for: job.request.url)
    }

    /// The HTTP versions the session allows, and whether to wait for a connection being set up
    /// to find out if it multiplexes: where h2 may come (https unless the session wants
    /// HTTP/1.1, anything with prior knowledge), tasks started together then become streams of
    /// one connection instead of opening one each. Plain HTTP/1.1 never waits.
    func configureHTTPVersion(for url: String) throws {
        let version = job.network.httpVersion
        try handle.set(.httpVersion(version.curl))
        let https = url.prefix(8).lowercased() == "https://"
        if version == .h2PriorKnowledge && !https && !CurlLibrary.reusesPriorKnowledgeConnections {
            // libcurl 7.x fails any transfer that reuses a cleartext prior-knowledge connection
            // (`CurlLibrary.reusesPriorKnowledgeConnections`): one connection per transfer.
            try handle.set(.freshConnect(true))
            try handle.set(.forbidReuse(true))
            try handle.set(.pipeWait(false))
            return
        }
        let mayMultiplex = switch version {
        case .http1_1: false
        case .auto, .h2: https
        case .h2PriorKnowledge: true
        }
        try handle.set(.pipeWait(mayMultiplex))
    }

    /// Sets the proxy (or none) for the next request, to `url`: the first, or a redirect's
    /// target (options set in the header callback apply to the next request of the chain).
    func route(to url: String) throws {
        // Without proxies there is nothing to route: no URL parse (Foundation's), which was 3% of
        // the engine thread's instructions per 16 KiB download.
        let route = job.network.proxies.flatMap { proxies in
            URL(string: url).flatMap { url in url.scheme.flatMap { scheme in url.host.flatMap { proxies.route(scheme: scheme, host: $0) } } }
        }
        if route != proxyState.route { proxyState = ProxyState(route: route) }
        // "" is no proxy, whatever http_proxy or all_proxy say in the daemon's environment.
        try handle.set(.proxy(route?.url ?? ""))
        try handle.set(.proxyUsername(route?.username))
        try handle.set(.proxyPassword(route?.username == nil ? nil : route?.password ?? ""))
        if route?.kind == .http && route?.username != nil {
            try handle.set(.proxyAuthentication(basic: true, digest: true))
        }
    }

    /// Whether `head` is a proxy's 407 that curl answers itself by sending the request again
    /// with the credentials (Basic or Digest, as offered). Only the first: a 407 after the
    /// credentials went means they were refused, and is the response.
    func isProxyChallengeCurlAnswers(_ head: ResponseHead) -> Bool {
        guard head.statusCode == 407, let route = proxyState.route, route.kind == .http,
              route.username != nil, !proxyState.challenged else { return false }
        let offered = head.fields.filter { $0.name.equalsIgnoringASCIICase("proxy-authenticate") }.map { $0.value.lowercased() }
        guard offered.contains(where: { $0.hasPrefix("basic") || $0.hasPrefix("digest") }) else { return false }
        proxyState.challenged = true
        return true
    }

    /// The task error for a transfer libcurl ended with `code`: the network policy's refusal
    /// (of the first request or a redirect hop) and a proxy's refusal are told apart from the
    /// origin's failures (a CONNECT refused with 407 otherwise reads as a lost
    /// connection).
    func transportError(_ code: CurlCode) -> TaskError {
        URLErrorMapping.policyError(code, handle)
            ?? URLErrorMapping.proxyError(connectStatus: handle.proxyConnectResponseCode, failure: handle.proxyFailure, route: proxyState.route)
            ?? (remoteScheme == nil ? URLErrorMapping.error(for: code, detail: handle.errorMessage)
                : URLErrorMapping.remoteFileError(for: code, detail: handle.errorMessage))
    }
}
