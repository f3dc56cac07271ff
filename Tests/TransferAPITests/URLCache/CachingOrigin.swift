import Foundation
import Synchronization
import Testing
import TestSupport

/// An in-process origin for URL cache tests: each path answers with the body and headers set
/// for it (404 otherwise), and a request whose If-None-Match equals the ETag, or whose
/// If-Modified-Since equals the Last-Modified, gets 304 with the resource's 304 headers. It keeps
/// every request, so a test counts what reached it and sees the conditional headers.
final class CachingOrigin: Sendable {
    struct Resource: Sendable {
        var body: String
        var headers: [String: String]
        var notModifiedHeaders: [String: String] = [:]
    }

    /// The resources by path, shared with the server's handler.
    private final class Table: Sendable {
        let resources = Mutex<[String: Resource]>([:])
    }

    private let table = Table()
    let server: OriginServer

    init() throws {
        let table = self.table
        server = try OriginServer { request in
            guard let resource = table.resources.withLock({ $0[request.pathWithoutQuery] }) else { return .respond(status: 404) }
            let etag = Self.value("ETag", in: resource.headers)
            let lastModified = Self.value("Last-Modified", in: resource.headers)
            let etagMatches = etag != nil && request.header("If-None-Match") == etag
            let dateMatches = request.header("If-None-Match") == nil && lastModified != nil && request.header("If-Modified-Since") == lastModified
            if etagMatches || dateMatches {
                var headers = resource.notModifiedHeaders
                if let etag { headers["ETag"] = etag }
                return .respond(status: 304, headers: headers)
            }
            var headers = resource.headers
            headers["Content-Type"] = headers["Content-Type"] ?? "text/plain; charset=utf-8"
            return .respond(headers: headers, body: Data(resource.body.utf8))
        }
    }

    func stop() { server.stop() }

    private static func value(_ name: String, in headers: [String: String]) -> String? {
        headers.first { $0.key.lowercased() == name.lowercased() }?.value
    }

    func set(_ path: String, body: String, headers: [String: String], notModified: [String: String] = [:]) {
        table.resources.withLock { $0[path] = Resource(body: body, headers: headers, notModifiedHeaders: notModified) }
    }

    func url(_ path: String) -> String { server.url(path) }

    /// The requests that reached `path` so far.
    func requests(to path: String) -> [OriginRequest] {
        server.requests.filter { $0.pathWithoutQuery == path }
    }
}

extension DaemonFixture {
    /// Runs a data task to completion and returns the task and its body's text.
    func fetch(in session: String = "shared", _ url: String, _ extra: [String: Any] = [:], sourceLocation: SourceLocation = #_sourceLocation) async throws -> (task: [String: Any], body: String) {
        var request: [String: Any] = ["url": url]
        request.merge(extra) { _, new in new }
        let id = try #require(try await dataTask(in: session, request, sourceLocation: sourceLocation).int("id"), sourceLocation: sourceLocation)
        let task = try await waitForCompletion(id, sourceLocation: sourceLocation)
        guard task.isNull("error") else { return (task, "") }
        let body = try await self.body(id)
        try #require(body.status == 200, "body of \(id): \(body)", sourceLocation: sourceLocation)
        return (task, body.text)
    }

    /// Runs a data task to completion and returns its cacheStatus.
    func cacheStatus(in session: String = "shared", _ url: String, _ extra: [String: Any] = [:], sourceLocation: SourceLocation = #_sourceLocation) async throws -> String? {
        try await fetch(in: session, url, extra, sourceLocation: sourceLocation).task.string("cacheStatus")
    }

    /// The types of the events of task `id`, in order.
    func eventTypes(_ session: String, task id: Int?) async throws -> [String] {
        try await allEvents(session).filter { $0.int("taskId") == id }.compactMap { $0.string("type") }
    }
}
