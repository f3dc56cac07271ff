internal import HTTPServer

/// The dashboard: `GET /` and `GET /dashboard/{name}`. Static and public (no token): the page
/// asks for a token itself and sends it to /v1 as `Authorization: Bearer`.
enum DashboardRoutes {
    static func register(_ router: inout Router) {
        router.add("GET", "/") { request in
            .now(DashboardAssets.index.response(to: request.http))
        }
        router.add("GET", "/dashboard/{name}") { request in
            let name = request.parameter("name")
            guard let asset = DashboardAssets.files[name] else {
                throw APIError.notFound("no dashboard file \(name.prefix(100))")
            }
            return .now(asset.response(to: request.http))
        }
    }
}
