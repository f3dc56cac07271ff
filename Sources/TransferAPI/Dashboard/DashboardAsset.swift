internal import LibCrypto
internal import FoundationEssentials
internal import HTTPServer
internal import TransferModel

/// One file of the dashboard, embedded in the binary at build time: its bytes, media type and a
/// strong ETag (a digest of the bytes, so it changes exactly when the file does). Built once by
/// `DashboardAssets`; read by `DashboardRoutes`.
struct DashboardAsset: Sendable {
    let body: Data
    let contentType: String
    let etag: String

    init(_ bytes: [UInt8], contentType: String) {
        body = Data(bytes)
        self.contentType = contentType
        etag = "\"" + hexString(HashFunction.sha256.hash(body).prefix(16)) + "\""
    }

    /// 200 with the file, or 304 when the client's `If-None-Match` names this version.
    func response(to request: HTTPRequest) -> HTTPResponse {
        var headers = DashboardAsset.securityHeaders
        headers.add(name: "ETag", value: etag)
        // Revalidated on every load (cheap with the ETag), so a new binary's page is never mixed
        // with an old cached script.
        headers.add(name: "Cache-Control", value: "no-cache")
        if let candidates = request.headers["If-None-Match"], matches(candidates) {
            return HTTPResponse(status: 304, headers: headers)
        }
        headers.add(name: "Content-Type", value: contentType)
        return HTTPResponse(status: 200, headers: headers, body: body)
    }

    /// RFC 9110 §13.1.2: a list of entity tags or `*`; weak comparison is allowed for GET.
    private func matches(_ field: String) -> Bool {
        field.split(separator: ",").contains { candidate in
            let tag = String(candidate.filter { $0 != " " && $0 != "\t" })
            return tag == "*" || tag == etag || tag == "W/" + etag
        }
    }

    /// The page holds a bearer token: it runs only its own scripts and styles, talks only to its
    /// own origin, is never framed, and never sends its address elsewhere.
    static let securityHeaders = HTTPHeaders([
        ("Content-Security-Policy", "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"),
        ("X-Content-Type-Options", "nosniff"),
        ("Referrer-Policy", "no-referrer"),
        ("X-Frame-Options", "DENY"),
        ("Cross-Origin-Opener-Policy", "same-origin"),
    ])
}
