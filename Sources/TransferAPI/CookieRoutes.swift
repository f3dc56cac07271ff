internal import HTTPServer
internal import TransferModel
internal import TransferService

/// /v1/sessions/{sid}/cookies: the cookies a session sees. For a default or background session
/// that is the jar every such session of the client shares (HTTPCookieStorage.shared); for an
/// ephemeral session its private jar.
enum CookieRoutes {
    static func register(_ router: inout Router, service: TransferService) {
        router.add("GET", "/v1/sessions/{sid}/cookies") { request in
            let url = request.http.query["url"]
            return .json(CookieList(try service.cookies(in: request.parameter("sid"), for: url, owner: request.owner)))
        }
        router.add("PUT", "/v1/sessions/{sid}/cookies") { request in
            let body = try request.decode(CookiesPut.self)
            return .json(CookieList(try service.setCookies(body.cookies, in: request.parameter("sid"), owner: request.owner)))
        }
        router.add("DELETE", "/v1/sessions/{sid}/cookies") { request in
            let query = request.http.query
            let filter = CookieFilter(url: query["url"], name: query["name"], domain: query["domain"], path: query["path"])
            if filter.url != nil, filter.name != nil || filter.domain != nil || filter.path != nil {
                throw APIError(400, "invalid_query", "url selects cookies alone: give either url, or name, domain and path", field: "url")
            }
            return .json(CookiesDeleted(deleted: try service.deleteCookies(in: request.parameter("sid"), filter, owner: request.owner)))
        }
    }
}

/// The answer of DELETE /v1/sessions/{sid}/cookies.
struct CookiesDeleted: Encodable {
    let deleted: Int
}
