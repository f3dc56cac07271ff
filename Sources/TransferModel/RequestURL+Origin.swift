internal import FoundationEssentials

extension RequestURL {
    /// "scheme://host:port", lowercased, with the scheme's default port filled in: what the
    /// scheduler's per-host caps count by, and what the engine names a segment's source by when
    /// it asks for connections (the two must agree). Nil for a URL without a host.
    package static func origin(of text: String) -> String? {
        if let plain = PlainHTTPURL.origin(text) { return plain }
        return parsedOrigin(of: text)
    }

    /// `origin(of:)` by Foundation's parse: for every URL that is not plain, and for the tests
    /// that hold the plain one to it.
    static func parsedOrigin(of text: String) -> String? {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), let host = url.host?.lowercased() else { return nil }
        let port = url.port ?? (scheme == "https" ? 443 : 80)
        return "\(scheme)://\(host):\(port)"
    }
}
