internal import HTTPServer
internal import TransferModel
internal import TransferService

/// /v1/limits: the daemon-wide download and upload rate limits and the background share. Every
/// token may read them (they bound its own transfers); only an admin may change them.
enum LimitsRoutes {
    static func register(_ router: inout Router, service: TransferService) {
        router.add("GET", "/v1/limits") { _ in .json(service.bandwidthLimits) }
        router.add("PATCH", "/v1/limits", access: .admin) { request in
            .json(try service.updateBandwidthLimits(try request.decode(BandwidthLimitsPatch.self)))
        }
    }
}
