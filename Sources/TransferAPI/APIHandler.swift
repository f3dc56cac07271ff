internal import FoundationEssentials
public import HTTPServer
public import Logging
internal import TransferStore
public import TransferService

/// The HTTP server's handler for the whole API: authentication before the body is read, then
/// routing to plain functions from `APIRequest` to `RouteResult`. `route` is what tests call
/// without sockets; `handle` adapts it to the server's `Responder`, and gives every request an id
/// (`X-Request-Id`), one access log line and a latency observation (`HTTPRequestMetrics`).
public final class APIHandler: HTTPRequestHandler {
    private let router: Router
    private let authenticator: Authenticator
    private let logger: Logger
    let service: TransferService
    private let blobs: BlobStore
    private let maxBlobSize: Int
    private let requestMetrics: HTTPRequestMetrics

    public init(
        service: TransferService, authenticator: Authenticator, maxBlobSize: Int = 4 << 30,
        logger: Logger = Logger(label: "transferd.api")
    ) {
        var router = Router()
        OperationsRoutes.register(&router, service: service)
        MetricsRoutes.register(&router, service: service)
        SessionRoutes.register(&router, service: service)
        CookieRoutes.register(&router, service: service)
        SessionOperationRoutes.register(&router, service: service)
        CredentialRoutes.register(&router, service: service)
        CacheRoutes.register(&router, service: service)
        TaskRoutes.register(&router, service: service)
        StreamRoutes.register(&router, service: service)
        TaskChangeRoutes.register(&router, service: service)
        DashboardRoutes.register(&router)
        SchedulerRoutes.register(&router, service: service)
        LimitsRoutes.register(&router, service: service)
        BlobRoutes.register(&router, service: service, maxBlobSize: maxBlobSize, logger: logger)
        QuotaRoutes.register(&router, service: service)
        self.router = router
        self.authenticator = authenticator
        self.logger = logger
        self.service = service
        self.blobs = service.blobs
        self.maxBlobSize = maxBlobSize
        requestMetrics = HTTPRequestMetrics(registry: service.metrics.registry)
    }

    /// The routes this handler serves, "METHOD /pattern" (see `Router.registeredRoutes`).
    public var registeredRoutes: [String] { router.registeredRoutes }

    /// The routes only an admin token may call (see `Router.Access`).
    public var adminRoutes: [String] { router.adminRoutes }

    /// Refuses an unauthenticated /v1 request before its body is read.
    public func preflight(_ head: HTTPRequestHead) -> HTTPResponse? {
        guard Self.needsAuthentication(head.path), authenticated(head) == nil else { return nil }
        let started = ContinuousClock.now
        var response = Self.unauthorized.response
        let requestId = RequestID.of(head.headers)
        response.headers.replaceOrAdd(name: RequestID.header, value: requestId)
        finished(head, requestId: requestId, route: router.resolve(method: head.method, path: head.path).pattern,
                 status: response.status, duration: ContinuousClock.now - started)
        return response
    }

    /// Streams the body of `POST /v1/blobs` to disk, limited to maxBlobSize instead of the
    /// server's request limit. A client with a refused token gets a sink too, so it is answered
    /// 401 by preflight like any other (not 413 for passing the request limit); that sink
    /// never writes (and it opens no file before a first write anyway). So does a blob whose
    /// Content-Length alone would pass its token's disk quota: 507 before any byte is read.
    public func bodySink(for head: HTTPRequestHead) -> (any HTTPBodySink)? {
        // A byte test first: most POSTs (tasks) have no "b" and skip the split's allocations.
        guard head.method == "POST", head.path.utf8.contains(UInt8(ascii: "b")),
              head.path.split(separator: "/") == ["v1", "blobs"] else { return nil }
        guard let identity = authenticator.check(head.headers).identity else {
            return BlobUploadSink(blobs: blobs, owner: nil, maxBodySize: maxBlobSize, refusal: Self.unauthorized)
        }
        if let length = head.headers["Content-Length"].flatMap({ Int($0) }), length <= maxBlobSize,
           let refusal = service.blobQuotaRefusal(owner: identity.owner, size: length) {
            return BlobUploadSink(blobs: blobs, owner: identity.owner, maxBodySize: maxBlobSize, refusal: APIError.from(refusal))
        }
        return BlobUploadSink(blobs: blobs, owner: identity.owner, maxBodySize: maxBlobSize)
    }

    public func handle(_ request: HTTPRequest, responder: Responder) {
        let requestId = RequestID.of(request.headers)
        let started = ContinuousClock.now
        let (result, pattern, identity) = dispatch(request, requestId: requestId)
        let respond: @Sendable (HTTPResponse, Duration) -> Void = { [self] response, held in
            var response = response
            response.headers.replaceOrAdd(name: RequestID.header, value: requestId)
            finished(request.head, requestId: requestId, route: pattern, token: identity?.name, status: response.status,
                     duration: ContinuousClock.now - started, held: held)
            responder.respond(response)
        }
        switch result {
        case .now(let response):
            respond(response, .zero)
        case .later(let start):
            do {
                try start { respond($0, .zero) }
            } catch {
                respond(response(for: error, request, requestId: requestId), .zero)
            }
        case .held(let start):
            let hold = LongPollHold()
            do {
                try start { respond($0, hold.held()) }
                hold.begin()
            } catch {
                respond(response(for: error, request, requestId: requestId), .zero)
            }
        }
    }

    /// The access log line and the latency histogram of one answered request. Only the method,
    /// route pattern, status, duration and the token's configured name (never its secret): never
    /// the path's values, query, headers or body. `held` is the part of `duration` a long-poll
    /// waited for the client's `wait=`: logged apart and left out of the histogram, so a held
    /// poll does not read as a slow request. Probes (`/healthz`, `/readyz`) log at debug: an
    /// orchestrator asks every few seconds.
    private func finished(
        _ head: HTTPRequestHead, requestId: String, route: String?, token: String? = nil, status: Int, duration: Duration,
        held: Duration = .zero
    ) {
        requestMetrics.observe(method: head.method, route: route, status: status, duration: duration - held)
        let level: Logger.Level = route.map(Self.probeRoutes.contains) == true ? .debug : .info
        // The line's fields are made only when it is written (at --log-level info or lower).
        guard logger.logLevel <= level else { return }
        var metadata: Logger.Metadata = [
            "http.request.id": "\(requestId)", "http.method": "\(HTTPRequestMetrics.methodLabel(head.method))",
            "http.route": "\(route ?? HTTPRequestMetrics.unmatched)", "http.status": "\(status)",
            "http.duration": "\(Self.seconds(duration))",
        ]
        if held > .zero { metadata["http.held"] = "\(Self.seconds(held))" }
        if let token { metadata["auth.token"] = "\(token)" }
        logger.log(level: level, "request", metadata: metadata)
    }

    /// The health probes' routes, logged at debug.
    private static let probeRoutes: Set<String> = ["/healthz", "/readyz"]

    /// Seconds with microsecond precision, e.g. "0.000412".
    static func seconds(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        let micros = attoseconds / 1_000_000_000_000
        let fraction = String(micros)
        return "\(seconds).\(String(repeating: "0", count: max(0, 6 - fraction.count)))\(fraction)"
    }

    /// Routes one request to its handler and turns every thrown error into an error response.
    public func route(_ request: HTTPRequest) -> RouteResult {
        dispatch(request, requestId: String(request.head.id)).result
    }

    /// `route`, the pattern of the route the request matched (nil when none did) and who sent it
    /// (nil when its token was refused).
    private func dispatch(_ request: HTTPRequest, requestId: String) -> (result: RouteResult, pattern: String?, identity: Identity?) {
        var identity = Identity.anonymous
        if Self.needsAuthentication(request.path) {
            guard let authenticated = authenticated(request.head) else { return (.now(Self.unauthorized.response), nil, nil) }
            identity = authenticated
        }
        let resolution = router.resolve(method: request.method, path: request.path)
        switch resolution.match {
        case .notFound:
            return (.now(APIError.notFound("no route for \(request.path)").response), nil, identity)
        case .methodNotAllowed(let allowed):
            var error = APIError(405, "method_not_allowed", "\(request.method) is not allowed on \(request.path); use \(allowed.joined(separator: ", "))")
            error.headers = [("Allow", allowed.joined(separator: ", "))]
            return (.now(error.response), resolution.pattern, identity)
        case .found(let handler, let parameters, let access):
            if access == .admin && !identity.isAdmin {
                return (.now(Self.forbidden(request.method, resolution.pattern ?? request.path).response), resolution.pattern, identity)
            }
            var result: RouteResult
            do {
                result = try handler(APIRequest(http: request, parameters: parameters, identity: identity))
            } catch {
                result = .now(response(for: error, request, requestId: requestId))
            }
            // In a cluster, a session or task another node holds in memory (`passedOn`).
            if case .now(let answer) = result, answer.status == 404,
               let passed = passedOn(request, parameters: parameters, requestId: requestId) {
                result = passed
            }
            return (result, resolution.pattern, identity)
        }
    }

    private func response(for error: any Error, _ request: HTTPRequest, requestId: String) -> HTTPResponse {
        let apiError = APIError.from(error)
        if apiError.status >= 500 && apiError.code == "internal_error" {
            logger.error("unexpected error", metadata: ["http.request.id": "\(requestId)", "error.type": "\(type(of: error))"])
        }
        return apiError.response
    }

    /// Who sent a request to an authenticated route: its bearer token's identity, else a file
    /// grant's; nil when neither holds. The same answer before the body (`preflight`) and after.
    private func authenticated(_ head: HTTPRequestHead) -> Identity? {
        authenticator.check(head.headers).identity ?? fileGrantIdentity(head)
    }

    /// Who a request without a valid token may act as through a file grant (`FileGrants`):
    /// only `GET` (or `HEAD`) of exactly `/v1/tasks/{tid}/file` with the `grant` made for that
    /// task, not expired, whose tenant's token is still configured. Any other path ignores it.
    private func fileGrantIdentity(_ head: HTTPRequestHead) -> Identity? {
        guard head.method == "GET" || head.method == "HEAD", let grant = head.query["grant"] else { return nil }
        let parts = head.path.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 5, parts[0].isEmpty, parts[1] == "v1", parts[2] == "tasks", parts[4] == "file",
              let task = Int(parts[3]), task > 0 else { return nil }
        let now = Int(Date().timeIntervalSince1970)
        guard case .some(.some(let owner)) = service.fileGrants.owner(of: grant, task: task, now: now) else { return nil }
        return authenticator.identity(owner: owner)
    }

    /// /v1 and /metrics take the bearer token when tokens are set; /healthz, /readyz and
    /// /openapi.yaml never do (probes and tooling carry none).
    private static func needsAuthentication(_ path: String) -> Bool { path == "/v1" || path.hasPrefix("/v1/") || path == "/metrics" }

    /// A tenant token on a daemon-wide route (`Router.Access.admin`).
    private static func forbidden(_ method: String, _ route: String) -> APIError {
        APIError(403, "forbidden", "\(method) \(route) changes or reads what every tenant shares: it needs an admin token")
    }

    private static var unauthorized: APIError {
        var error = APIError(401, "unauthorized", "send a valid token as Authorization: Bearer TOKEN")
        error.headers = [("WWW-Authenticate", "Bearer")]
        return error
    }
}
