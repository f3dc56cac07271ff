public import HTTPServer
public import Logging
public import TransferCore

/// The HTTP server's handler for the whole API: authentication before the body is read, then
/// routing to plain functions from `APIRequest` to `RouteResult`. `route` is what tests call
/// without sockets; `handle` adapts it to the server's `Responder`.
public final class APIHandler: HTTPRequestHandler {
    private let router: Router
    private let authenticator: Authenticator
    private let logger: Logger
    private let blobs: BlobStore
    private let maxBlobSize: Int

    public init(
        service: TransferService, authenticator: Authenticator, maxBlobSize: Int = 4 << 30,
        logger: Logger = Logger(label: "transferd.api")
    ) {
        var router = Router()
        OperationsRoutes.register(&router, service: service)
        SessionRoutes.register(&router, service: service)
        CookieRoutes.register(&router, service: service)
        SessionOperationRoutes.register(&router, service: service)
        CredentialRoutes.register(&router, service: service)
        CacheRoutes.register(&router, service: service)
        TaskRoutes.register(&router, service: service)
        TaskChangeRoutes.register(&router, service: service)
        DashboardRoutes.register(&router)
        SchedulerRoutes.register(&router, service: service)
        LimitsRoutes.register(&router, service: service)
        BlobRoutes.register(&router, blobs: service.blobs, maxBlobSize: maxBlobSize, logger: logger)
        self.router = router
        self.authenticator = authenticator
        self.logger = logger
        self.blobs = service.blobs
        self.maxBlobSize = maxBlobSize
    }

    /// Refuses an unauthenticated /v1 request before its body is read.
    public func preflight(_ head: HTTPRequestHead) -> HTTPResponse? {
        guard Self.needsAuthentication(head.path), authenticator.check(head.headers) == .rejected else { return nil }
        return Self.unauthorized.response
    }

    /// Streams the body of `POST /v1/blobs` to disk, limited to maxBlobSize instead of the
    /// server's request limit. A client with a refused token gets a sink too, so it is answered
    /// 401 by preflight like any other (not 413 for passing the request limit); that sink
    /// never writes (and it opens no file before a first write anyway).
    public func bodySink(for head: HTTPRequestHead) -> (any HTTPBodySink)? {
        guard head.method == "POST", head.path.split(separator: "/") == ["v1", "blobs"] else { return nil }
        switch authenticator.check(head.headers) {
        case .anonymous:
            return BlobUploadSink(blobs: blobs, owner: nil, maxBodySize: maxBlobSize)
        case .owner(let fingerprint):
            return BlobUploadSink(blobs: blobs, owner: fingerprint, maxBodySize: maxBlobSize)
        case .rejected:
            return BlobUploadSink(blobs: blobs, owner: nil, maxBodySize: maxBlobSize, refusal: Self.unauthorized)
        }
    }

    public func handle(_ request: HTTPRequest, responder: Responder) {
        let requestId = request.head.id
        let started = ContinuousClock.now
        let respond: @Sendable (HTTPResponse) -> Void = { [logger] response in
            var response = response
            response.headers.replaceOrAdd(name: "X-Request-Id", value: String(requestId))
            logger.debug("request", metadata: [
                "http.request.id": "\(requestId)", "http.method": "\(request.method)", "http.path": "\(request.path)",
                "http.status": "\(response.status)", "http.duration": "\(ContinuousClock.now - started)",
            ])
            responder.respond(response)
        }
        switch route(request) {
        case .now(let response):
            respond(response)
        case .later(let start):
            do {
                try start(respond)
            } catch {
                respond(response(for: error, request))
            }
        }
    }

    /// Routes one request to its handler and turns every thrown error into an error response.
    public func route(_ request: HTTPRequest) -> RouteResult {
        var owner: String?
        if Self.needsAuthentication(request.path) {
            switch authenticator.check(request.headers) {
            case .anonymous: owner = nil
            case .owner(let fingerprint): owner = fingerprint
            case .rejected: return .now(Self.unauthorized.response)
            }
        }
        switch router.match(method: request.method, path: request.path) {
        case .notFound:
            return .now(APIError.notFound("no route for \(request.path)").response)
        case .methodNotAllowed(let allowed):
            var error = APIError(405, "method_not_allowed", "\(request.method) is not allowed on \(request.path); use \(allowed.joined(separator: ", "))")
            error.headers = [("Allow", allowed.joined(separator: ", "))]
            return .now(error.response)
        case .found(let handler, let parameters):
            do {
                return try handler(APIRequest(http: request, parameters: parameters, owner: owner))
            } catch {
                return .now(response(for: error, request))
            }
        }
    }

    private func response(for error: any Error, _ request: HTTPRequest) -> HTTPResponse {
        let apiError = APIError.from(error)
        if apiError.status >= 500 && apiError.code == "internal_error" {
            logger.error("unexpected error", metadata: ["http.request.id": "\(request.head.id)", "http.path": "\(request.path)", "error.type": "\(type(of: error))"])
        }
        return apiError.response
    }

    private static func needsAuthentication(_ path: String) -> Bool { path == "/v1" || path.hasPrefix("/v1/") }

    private static var unauthorized: APIError {
        var error = APIError(401, "unauthorized", "send a valid token as Authorization: Bearer TOKEN")
        error.headers = [("WWW-Authenticate", "Bearer")]
        return error
    }
}
