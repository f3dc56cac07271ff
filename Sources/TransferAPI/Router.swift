/// Matches a method and path to a route handler. Paths are patterns of literal segments and
/// `{name}` parameters. A path that matches with another method is 405 (with Allow), none is 404.
public struct Router: Sendable {
    public typealias Handler = @Sendable (APIRequest) throws -> RouteResult

    private struct Route: Sendable {
        let method: String
        let pattern: String
        let segments: [Substring]
        let handler: Handler
    }

    private var routes: [Route] = []

    public init() {}

    public mutating func add(_ method: String, _ pattern: String, _ handler: @escaping Handler) {
        routes.append(Route(method: method, pattern: pattern, segments: pattern.split(separator: "/"), handler: handler))
    }

    /// Every registered route as "METHOD /pattern", in registration order: what openapi.yaml
    /// must describe (TransferAPITests compares the two).
    public var registeredRoutes: [String] { routes.map { "\($0.method) \($0.pattern)" } }

    public enum Match {
        case found(Handler, [String: String])
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
        let segments = path.split(separator: "/", omittingEmptySubsequences: true)
        var allowed: [String] = []
        var pattern: String?
        for route in routes {
            guard let parameters = Self.bind(route.segments, to: segments) else { continue }
            if route.method == method || (method == "HEAD" && route.method == "GET") {
                return Resolution(match: .found(route.handler, parameters), pattern: route.pattern)
            }
            allowed.append(route.method)
            pattern = pattern ?? route.pattern
        }
        return Resolution(match: allowed.isEmpty ? .notFound : .methodNotAllowed(allowed: allowed), pattern: pattern)
    }

    private static func bind(_ pattern: [Substring], to path: [Substring]) -> [String: String]? {
        guard pattern.count == path.count else { return nil }
        var parameters: [String: String] = [:]
        for (expected, actual) in zip(pattern, path) {
            if expected.first == "{" && expected.last == "}" {
                parameters[String(expected.dropFirst().dropLast())] = String(actual)
            } else if expected != actual {
                return nil
            }
        }
        return parameters
    }
}
