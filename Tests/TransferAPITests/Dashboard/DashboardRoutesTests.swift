import Foundation
import Testing
import TransferAPI
import TransferModel
import TransferStore
import TransferEngine
import TransferService

/// GET / and /dashboard/{name}: the embedded page and its files, public, with their media types,
/// a strong ETag that revalidates, and the headers a page holding a token needs.
@Suite struct DashboardRoutesTests {
    static let token = "dashboard-token-0123456789"

    static func configure(_ configuration: inout DaemonConfiguration) {
        configuration.tokens = [token]
    }

    /// Every `/dashboard/...` file index.html names, and every `./x.js` a script imports.
    private func referencedFiles(_ daemon: DaemonFixture) async throws -> [String] {
        let page = try await daemon.get("/", token: .some(nil)).text
        var files = matches(of: #"(?:src|href)="/dashboard/([A-Za-z0-9._-]+)""#, in: page)
        var index = 0
        while index < files.count {
            if files[index].hasSuffix(".js") {
                let script = try await daemon.get("/dashboard/\(files[index])", token: .some(nil))
                #expect(script.status == 200, "\(files[index]): \(script)")
                for imported in matches(of: #"from '\./([A-Za-z0-9._-]+)'"#, in: script.text) where !files.contains(imported) {
                    files.append(imported)
                }
            }
            index += 1
        }
        return files
    }

    private func matches(of pattern: String, in text: String) -> [String] {
        let expression = try! NSRegularExpression(pattern: pattern)
        return expression.matches(in: text, range: NSRange(text.startIndex..., in: text)).compactMap { match in
            Range(match.range(at: 1), in: text).map { String(text[$0]) }
        }
    }

    private func expectPageHeaders(_ response: APIResponse, _ what: String) {
        let policy = response.header("Content-Security-Policy") ?? ""
        #expect(policy.contains("default-src 'self'"), "\(what): \(policy)")
        #expect(policy.contains("script-src 'self'") && !policy.contains("unsafe-inline"), "\(what): \(policy)")
        #expect(policy.contains("frame-ancestors 'none'"), "\(what): \(policy)")
        #expect(response.header("X-Content-Type-Options") == "nosniff", "\(what)")
        #expect(response.header("Referrer-Policy") == "no-referrer", "\(what)")
        #expect(response.header("Cache-Control") == "no-cache", "\(what)")
        let etag = response.header("ETag") ?? ""
        #expect(etag.hasPrefix("\"") && etag.hasSuffix("\"") && etag.count == 34, "\(what): a strong ETag, not \(etag)")
    }

    @Test func pageAndEveryFileItNamesAnswerWithTheirTypeAndHeadersWithoutAToken() async throws {
        try await DaemonFixture.with(configure: Self.configure) { daemon in
            let page = try await daemon.get("/", token: .some(nil))
            #expect(page.status == 200)
            #expect(page.header("Content-Type") == "text/html; charset=utf-8")
            #expect(page.text.hasPrefix("<!doctype html>"))
            expectPageHeaders(page, "/")

            let files = try await referencedFiles(daemon)
            #expect(Set(files) == ["app.css", "app.js", "api.js", "format.js", "view.js", "states.js", "tasklist.js", "overview.js", "detail.js", "add.js"], "\(files)")
            for file in files {
                let response = try await daemon.get("/dashboard/\(file)", token: .some(nil))
                #expect(response.status == 200, "\(file): \(response)")
                #expect(!response.body.isEmpty, "\(file)")
                let type = file.hasSuffix(".css") ? "text/css; charset=utf-8" : "text/javascript; charset=utf-8"
                #expect(response.header("Content-Type") == type, "\(file)")
                expectPageHeaders(response, file)
            }
            // No inline script or handler (the policy would block them, and the page would not work).
            #expect(page.text.range(of: #"<script(?![^>]*\ssrc=)"#, options: .regularExpression) == nil)
            #expect(page.text.range(of: #"\son[a-z]+="#, options: .regularExpression) == nil)
        }
    }

    @Test func theETagRevalidatesAndChangesWithTheFile() async throws {
        try await DaemonFixture.with(configure: Self.configure) { daemon in
            let page = try await daemon.get("/", token: .some(nil))
            let script = try await daemon.get("/dashboard/app.js", token: .some(nil))
            let pageTag = try #require(page.header("ETag")), scriptTag = try #require(script.header("ETag"))
            #expect(pageTag != scriptTag)
            for (path, tag) in [("/", pageTag), ("/dashboard/app.js", scriptTag)] {
                for field in [tag, "W/\(tag)", "\"other\", \(tag)", "*"] {
                    let again = try await daemon.request("GET", path, headers: ["If-None-Match": field], token: .some(nil))
                    #expect(again.status == 304, "\(path) If-None-Match: \(field)")
                    #expect(again.body.isEmpty)
                    #expect(again.header("ETag") == tag)
                }
                let stale = try await daemon.request("GET", path, headers: ["If-None-Match": "\"stale\""], token: .some(nil))
                #expect(stale.status == 200)
            }
        }
    }

    @Test func unknownFilesAndOtherMethodsAreJSONErrors() async throws {
        try await DaemonFixture.with(configure: Self.configure) { daemon in
            for path in ["/dashboard/missing.js", "/dashboard/..%2Fopenapi.yaml", "/dashboard/", "/dashboard/a/b"] {
                let response = try await daemon.get(path, token: .some(nil))
                #expect(response.status == 404, "\(path): \(response)")
                #expect(response.errorCode == "not_found", "\(path)")
            }
            let post = try await daemon.post("/", json: [:], token: .some(nil))
            #expect(post.status == 405)
            #expect(post.header("Allow") == "GET")
            let head = try await daemon.request("HEAD", "/dashboard/app.css", token: .some(nil))
            #expect(head.status == 200)
        }
    }
}
