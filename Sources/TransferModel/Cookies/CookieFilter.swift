/// Which cookies `DELETE /v1/sessions/{sid}/cookies` removes: those a request to `url` would
/// carry, or those with the given name, domain and path (each optional); nothing given: all.
public struct CookieFilter: Sendable, Equatable {
    public var url: String?
    public var name: String?
    /// As the API shows it: a leading "." names a domain cookie, none a host-only one.
    public var domain: String?
    public var path: String?

    public init(url: String? = nil, name: String? = nil, domain: String? = nil, path: String? = nil) {
        self.url = url
        self.name = name
        self.domain = domain
        self.path = path
    }

    package var selectsAll: Bool { url == nil && name == nil && domain == nil && path == nil }

    package func matches(_ cookie: Cookie) -> Bool {
        if let name, cookie.name != name { return false }
        if let path, cookie.path != path { return false }
        if let domain {
            // Without the dot it matches either kind, as a person would expect.
            let wanted = domain.lowercased()
            if wanted.hasPrefix(".") { return !cookie.isHostOnly && cookie.domain == wanted.dropFirst() }
            return cookie.domain == wanted
        }
        return true
    }
}
