internal import FoundationEssentials
internal import HTTPServer
internal import TransferCore

/// `GET /metrics`: the daemon's figures in Prometheus' text format. Outside /v1 but, like
/// `/v1/stats`, behind the bearer token when tokens are set (`APIHandler.needsAuthentication`):
/// the figures are daemon-wide, with no per-token or per-task labels.
enum MetricsRoutes {
    static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    static func register(_ router: inout Router, service: TransferService) {
        router.add("GET", "/metrics") { _ in
            .now(HTTPResponse(status: 200, headers: HTTPHeaders([("Content-Type", contentType)]), body: Data(service.renderMetrics())))
        }
    }
}
