/// Matches a method and path to a route handler. Paths are patterns of literal segments and
/// `{name}` parameters. A path that matches with another method is 405 (with Allow), none is 404.
///
/// Each route says who may call it (`Access`), so the daemon-wide ones are listed in one place
/// (`adminRoutes`) and refused to a tenant before their handler runs.
public struct Router: Sendable {
    public typealias Handler = @Sendable (APIRequest) throws -> RouteResult

    /// Who may call a route once authenticated.
    public enum Access: Sendable {
        /// Any token; the handler scopes what it reads or changes to the token's owner.
        case everyone
        /// Admin tokens only (and everyone without tokens): the route reads or changes what
        /// every tenant shares.
        case admin
    }

    private struct Route: Sendable {
        let method: String
        let pattern: String
        let segments: [Substring]
        /// Per segment, the parameter's name, or nil for a literal: worked out once here, not
        /// per request (reading a segment's first and last Characters, for every route tried,
        /// was a tenth of a single POST's instructions, callgrind).
        let parameters: [String?]
        let access: Access
        let handler: Handler
    }

    private var routes: [Route] = []

    public init() {}

    public mutating func add(_ method: String, _ pattern: String, access: Access = .everyone, _ handler: @escaping Handler) {
        let segments = pattern.split(separator: "/")
        let parameters = segments.map { Self.isParameter($0) ? String($0.dropFirst().dropLast()) : nil }
        routes.append(Route(method: method, pattern: pattern, segments: segments, parameters: parameters, access: access, handler: handler))
    }

    /// The routes only an admin token may call, "METHOD /pattern".
    public var adminRoutes: [String] { routes.filter { $0.access == .admin }.map { "\($0.method) \($0.pattern)" } }

    /// Every registered route as "METHOD /pattern", in registration order: what openapi.yaml
    /// must describe (TransferAPITests compares the two).
    public var registeredRoutes: [String] { routes.map { "\($0.method) \($0.pattern)" } }

    public enum Match {
        case found(Handler, [String: String], Access)
        case methodNotAllowed(allowed: [String])
        case notFound
    }

    public func match(method: String, path: String) -> Match { resolve(method: method, path: path).match }

    /// A match and the pattern it matched ("/v1/tasks/{tid}"): metrics and logs name the route
    /// by its pattern, never by the raw path, whose values are unbounded.
    public struct Resolution {
        public let match: Match
        /// The matched route's pattern (also for 405: the path matched, the method did not); nil for 404.
        public let pattern: String?
    }

    public func resolve(method: String, path: String) -> Resolution {
        // Split on the byte (a Character split walks grapheme boundaries); empty segments go.
        let segments = path.utf8.split(separator: UInt8(ascii: "/")).map { Substring($0) }
        var allowed: [String] = []
        var pattern: String?
        for route in routes {
            guard let parameters = Self.bind(route, to: segments) else { continue }
            if route.method == method || (method == "HEAD" && route.method == "GET") {
                return Resolution(match: .found(route.handler, parameters, route.access), pattern: route.pattern)
            }
            allowed.append(route.method)
            pattern = pattern ?? route.pattern
        }
        return Resolution(match: allowed.isEmpty ? .notFound : .methodNotAllowed(allowed: allowed), pattern: pattern)
    }

    private static func bind(_ route: Route, to path: [Substring]) -> [String: String]? {
        guard route.segments.count == path.count else { return nil }
        // Literals first: most routes of the same length differ in one, and a route that does
        // not match should cost no dictionary (every request tries them in order).
        for index in path.indices where route.parameters[index] == nil && route.segments[index] != path[index] { return nil }
        var parameters: [String: String] = [:]
        for index in path.indices {
            if let name = route.parameters[index] { parameters[name] = String(path[index]) }
        }
        return parameters
    }

    private static func isParameter(_ segment: Substring) -> Bool { segment.first == "{" && segment.last == "}" }
}
