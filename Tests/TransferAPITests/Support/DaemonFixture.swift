import Foundation
import Logging
import Synchronization
import Testing
import TestSupport
import TransferAPI
import TransferModel
import TransferStore
import TransferEngine
import TransferService

/// One daemon for one test: a temp data folder, a `TransferDaemon` on 127.0.0.1 port 0, and a
/// keep-alive client, with JSON helpers for the API. Created only through ``with(_:exclusive:_:)``,
/// which stops the daemon and removes the folder however the test ends.
///
/// The helpers are async: every request runs on a thread of its own (`sendAsync`), so a held
/// long-poll never occupies one of Swift concurrency's two threads on this machine.
final class DaemonFixture: Sendable {
    let directory: TempDirectory
    let configuration: DaemonConfiguration
    let daemon: TransferDaemon
    /// The default client. It serialises its requests: a test that holds a long-poll while it
    /// sends another request uses ``newClient()`` for one of them.
    let client: TestHTTPClient
    /// Sent as `Authorization: Bearer` by default (nil: no header).
    let token: String?
    private let stopped = Mutex(false)

    private init(directory: TempDirectory, configuration: DaemonConfiguration, token: String?, logger: Logger = DaemonFixture.logger) throws {
        self.directory = directory
        self.configuration = configuration
        self.token = token
        daemon = try TransferDaemon(configuration: configuration, logger: logger)
        try daemon.start()
        client = TestHTTPClient(port: daemon.port)
    }

    var port: Int { daemon.port }

    /// Notice and above: the daemon's access line (info, one per request) would fill the test output.
    static var logger: Logger {
        var logger = Logger(label: "transferd")
        logger.logLevel = .notice
        return logger
    }

    /// Stops the daemon once; later calls do nothing.
    func stop() {
        let first = stopped.withLock { stopped in
            defer { stopped = true }
            return !stopped
        }
        if first { daemon.stop() }
    }

    func newClient() -> TestHTTPClient { TestHTTPClient(port: daemon.port) }

    /// The configuration every fixture starts from: port 0 on 127.0.0.1, two HTTP threads.
    static func baseConfiguration(_ directory: TempDirectory) -> DaemonConfiguration {
        var configuration = DaemonConfiguration(dataDirectory: directory.path)
        configuration.listen = ListenAddress(host: "127.0.0.1", port: 0)
        configuration.httpThreads = 2
        return configuration
    }

    /// Runs `body` with a fresh daemon. `exclusive` tests run alone in the process (thread counts,
    /// latency figures); the others share it with a few more (see ``TestGate``).
    static func with<T>(
        configure: (inout DaemonConfiguration) -> Void = { _ in },
        token: String? = nil,
        exclusive: Bool = false,
        logger: Logger = DaemonFixture.logger,
        _ body: (DaemonFixture) async throws -> T
    ) async throws -> T {
        try await TestGate.shared.run(exclusive: exclusive) {
            let directory = try TempDirectory(prefix: "transferd-apitest")
            defer { directory.remove() }
            var configuration = baseConfiguration(directory)
            configure(&configuration)
            let fixture = try DaemonFixture(directory: directory, configuration: configuration, token: token, logger: logger)
            defer { fixture.stop() }
            return try await body(fixture)
        }
    }

    /// A second daemon on the same data folder, after this one was stopped (restart tests).
    func restarted(token: String? = nil) throws -> DaemonFixture {
        try DaemonFixture(directory: directory, configuration: configuration, token: token ?? self.token)
    }

    /// A second daemon on the same data folder with another configuration (a changed flag).
    func restarted(_ configuration: DaemonConfiguration) throws -> DaemonFixture {
        try DaemonFixture(directory: directory, configuration: configuration, token: token)
    }

    // MARK: Requests

    /// Sends a request; `json` is serialised with `Content-Type: application/json`, `body` is sent raw.
    func request(
        _ method: String,
        _ path: String,
        json: Any? = nil,
        body: Data? = nil,
        headers: [String: String] = [:],
        token: String?? = .none,
        client: TestHTTPClient? = nil,
        timeout: Double = 30
    ) async throws -> APIResponse {
        var headers = headers
        var payload = body
        if let json {
            payload = try JSONSerialization.data(withJSONObject: json, options: [.fragmentsAllowed])
            if headers.keys.allSatisfy({ $0.lowercased() != "content-type" }) {
                headers["Content-Type"] = "application/json"
            }
        }
        if let token = token ?? self.token, headers.keys.allSatisfy({ $0.lowercased() != "authorization" }) {
            headers["Authorization"] = "Bearer \(token)"
        }
        let response = try await (client ?? self.client).sendAsync(method, path, headers: headers, body: payload, timeout: timeout)
        return APIResponse(response)
    }

    func get(_ path: String, token: String?? = .none, client: TestHTTPClient? = nil) async throws -> APIResponse {
        try await request("GET", path, token: token, client: client)
    }

    func post(_ path: String, json: Any? = nil, token: String?? = .none, client: TestHTTPClient? = nil) async throws -> APIResponse {
        try await request("POST", path, json: json, token: token, client: client)
    }

    func patch(_ path: String, json: Any, token: String?? = .none) async throws -> APIResponse {
        try await request("PATCH", path, json: json, token: token)
    }

    // MARK: Sessions and tasks

    /// Creates a session and returns it (expects 201).
    @discardableResult
    func createSession(_ json: [String: Any] = [:], sourceLocation: SourceLocation = #_sourceLocation) async throws -> [String: Any] {
        let response = try await post("/v1/sessions", json: json)
        try #require(response.status == 201, "create session: \(response)", sourceLocation: sourceLocation)
        return try response.object()
    }

    /// Creates a task in `session` from a full TaskCreate body and returns it (expects 201).
    @discardableResult
    func createTask(in session: String = "shared", _ json: [String: Any], sourceLocation: SourceLocation = #_sourceLocation) async throws -> [String: Any] {
        let response = try await post("/v1/sessions/\(session)/tasks", json: json)
        try #require(response.status == 201, "create task: \(response)", sourceLocation: sourceLocation)
        return try response.object()
    }

    /// Creates a data task for `request` (a RequestSpec) with optional extra TaskCreate fields.
    @discardableResult
    func dataTask(
        in session: String = "shared",
        _ request: [String: Any],
        extra: [String: Any] = [:],
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> [String: Any] {
        var body: [String: Any] = ["kind": "data", "request": request]
        body.merge(extra) { _, new in new }
        return try await createTask(in: session, body, sourceLocation: sourceLocation)
    }

    func task(_ id: Int, token: String?? = .none, sourceLocation: SourceLocation = #_sourceLocation) async throws -> [String: Any] {
        let response = try await get("/v1/tasks/\(id)", token: token)
        try #require(response.status == 200, "get task \(id): \(response)", sourceLocation: sourceLocation)
        return try response.object()
    }

    func session(_ id: String, sourceLocation: SourceLocation = #_sourceLocation) async throws -> [String: Any] {
        let response = try await get("/v1/sessions/\(id)")
        try #require(response.status == 200, "get session \(id): \(response)", sourceLocation: sourceLocation)
        return try response.object()
    }

    /// Long-polls the task's progress until `predicate` holds for a snapshot, then returns the
    /// whole task. Never sleeps: each poll is held by the daemon until the task changes.
    @discardableResult
    func waitForTask(
        _ id: Int,
        timeout: Double = 30,
        client: TestHTTPClient? = nil,
        token: String?? = .none,
        sourceLocation: SourceLocation = #_sourceLocation,
        until predicate: ([String: Any]) -> Bool
    ) async throws -> [String: Any] {
        let deadline = Date().addingTimeInterval(timeout)
        var after = 0
        while true {
            let remaining = deadline.timeIntervalSinceNow
            try #require(remaining > 0, "task \(id) did not reach the expected state in \(timeout) s", sourceLocation: sourceLocation)
            let wait = min(5, max(0.1, remaining))
            let response = try await request("GET", "/v1/tasks/\(id)/progress?after=\(after)&wait=\(wait)", token: token, client: client, timeout: wait + 10)
            try #require(response.status == 200, "progress of task \(id): \(response)", sourceLocation: sourceLocation)
            let snapshot = try response.object()
            if predicate(snapshot) {
                return try await task(id, token: token, sourceLocation: sourceLocation)
            }
            after = snapshot.int("version") ?? after
        }
    }

    /// Waits until the task has completed and returns it.
    @discardableResult
    func waitForCompletion(_ id: Int, timeout: Double = 30, client: TestHTTPClient? = nil, token: String?? = .none, sourceLocation: SourceLocation = #_sourceLocation) async throws -> [String: Any] {
        try await waitForTask(id, timeout: timeout, client: client, token: token, sourceLocation: sourceLocation) { $0.string("state") == "completed" }
    }

    /// GET /v1/tasks/{id}/body.
    func body(_ id: Int, client: TestHTTPClient? = nil) async throws -> APIResponse {
        try await request("GET", "/v1/tasks/\(id)/body", client: client)
    }

    // MARK: Events

    /// One page of the session's feed.
    func events(_ session: String, after: Int = 0, wait: Double = 0, limit: Int? = nil, client: TestHTTPClient? = nil) async throws -> (events: [[String: Any]], next: Int) {
        var path = "/v1/sessions/\(session)/events?after=\(after)&wait=\(wait)"
        if let limit { path += "&limit=\(limit)" }
        let response = try await request("GET", path, client: client, timeout: wait + 10)
        try #require(response.status == 200, "events of \(session): \(response)")
        let page = try response.object()
        let events = try #require(page["events"] as? [[String: Any]], "events: \(response)")
        let next = try #require(page.int("next"), "next: \(response)")
        return (events, next)
    }

    /// Every event of the session so far (wait 0), following `next`.
    func allEvents(_ session: String) async throws -> [[String: Any]] {
        var all: [[String: Any]] = []
        var after = 0
        while true {
            let page = try await events(session, after: after)
            if page.events.isEmpty { return all }
            all += page.events
            after = page.next
        }
    }

    /// Reads the feed (long-polling) until an event matching `predicate` arrives; returns all
    /// events read up to and including it.
    func waitForEvent(
        _ session: String,
        timeout: Double = 30,
        sourceLocation: SourceLocation = #_sourceLocation,
        where predicate: ([String: Any]) -> Bool
    ) async throws -> [[String: Any]] {
        let deadline = Date().addingTimeInterval(timeout)
        var seen: [[String: Any]] = []
        var after = 0
        while true {
            let remaining = deadline.timeIntervalSinceNow
            try #require(remaining > 0, "no matching event in \(session) within \(timeout) s; saw \(seen.map { $0.string("type") ?? "?" })", sourceLocation: sourceLocation)
            let page = try await events(session, after: after, wait: min(5, max(0.1, remaining)))
            for event in page.events {
                seen.append(event)
                if predicate(event) { return seen }
            }
            after = page.next
        }
    }
}

/// A response from the daemon with JSON accessors.
struct APIResponse: Sendable, CustomStringConvertible {
    let raw: TestHTTPResponse

    init(_ raw: TestHTTPResponse) { self.raw = raw }

    var status: Int { raw.status }
    var body: Data { raw.body }
    var text: String { raw.text }
    func header(_ name: String) -> String? { raw.header(name) }

    func object() throws -> [String: Any] { try raw.jsonObject() }

    /// The `error` object of an error body, or nil if the body is not `{"error": {...}}`.
    var error: [String: Any]? {
        (try? raw.jsonObject())?["error"] as? [String: Any]
    }

    var errorCode: String? { error?.string("code") }

    var description: String { raw.description }
}

// MARK: JSON access

extension Dictionary where Key == String, Value == Any {
    func string(_ key: String) -> String? { self[key] as? String }

    /// An integer value (JSON numbers arrive as NSNumber); nil for non-integers and booleans.
    func int(_ key: String) -> Int? {
        guard let number = self[key] as? NSNumber, !number.isBool else { return nil }
        let double = number.doubleValue
        guard double.rounded() == double else { return nil }
        return number.intValue
    }

    func double(_ key: String) -> Double? {
        guard let number = self[key] as? NSNumber, !number.isBool else { return nil }
        return number.doubleValue
    }

    func bool(_ key: String) -> Bool? {
        guard let number = self[key] as? NSNumber, number.isBool else { return nil }
        return number.boolValue
    }

    func object(_ key: String) -> [String: Any]? { self[key] as? [String: Any] }

    /// True if the key is present with JSON null.
    func isNull(_ key: String) -> Bool { self[key] is NSNull }

    /// A nested value by dotted path, e.g. "response.statusCode".
    func value(at path: String) -> Any? {
        var current: Any? = self
        for part in path.split(separator: ".") {
            current = (current as? [String: Any])?[String(part)]
        }
        return current
    }
}

extension NSNumber {
    /// Whether JSONSerialization produced this number from `true`/`false`.
    var isBool: Bool { String(describing: type(of: self)).contains("Boolean") }
}

/// Two JSON values (as JSONSerialization returns them) compared structurally.
func jsonEqual(_ a: Any?, _ b: Any?) -> Bool {
    switch (a, b) {
    case (nil, nil): return true
    case (let a as NSNull, let b as NSNull): _ = (a, b); return true
    case (let a as [String: Any], let b as [String: Any]):
        return a.count == b.count && a.allSatisfy { key, value in b.keys.contains(key) && jsonEqual(value, b[key]) }
    case (let a as [Any], let b as [Any]):
        return a.count == b.count && zip(a, b).allSatisfy { jsonEqual($0, $1) }
    case (let a as String, let b as String): return a == b
    case (let a as NSNumber, let b as NSNumber): return a.isBool == b.isBool && a == b
    default: return false
    }
}

/// Parses an RFC 3339 timestamp as the daemon writes it.
func parseTimestamp(_ value: Any?) -> Date? {
    guard let text = value as? String else { return nil }
    let formatter = ISO8601DateFormatter()
    if let date = formatter.date(from: text) { return date }
    formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
    return formatter.date(from: text)
}

/// Seconds since `start` on the monotonic clock.
func seconds(since start: ContinuousClock.Instant) -> Double {
    let elapsed = ContinuousClock.now - start
    return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
}

/// Runs blocking work (raw sockets, waits) on a thread of its own, so it never holds one of
/// Swift concurrency's few threads.
func onThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread { continuation.resume(with: Result { try body() }) }
        thread.name = "TransferAPITests blocking call"
        thread.start()
    }
}
