import FoundationEssentials
import Glibc
import HTTPServer
import Synchronization

/// A handler built from closures, so each test says inline what the server should do.
struct ClosureHandler: HTTPRequestHandler {
    var onPreflight: @Sendable (HTTPRequestHead) -> HTTPResponse? = { _ in nil }
    var onBodySink: @Sendable (HTTPRequestHead) -> (any HTTPBodySink)? = { _ in nil }
    var onHandle: @Sendable (HTTPRequest, Responder) -> Void

    func preflight(_ head: HTTPRequestHead) -> HTTPResponse? { onPreflight(head) }
    func bodySink(for head: HTTPRequestHead) -> (any HTTPBodySink)? { onBodySink(head) }
    func handle(_ request: HTTPRequest, responder: Responder) { onHandle(request, responder) }
}

/// Responders a long-poll test keeps, to answer them later from the test's own thread.
final class HeldResponders: Sendable {
    private let responders = Mutex<[Responder]>([])

    func hold(_ responder: Responder) { responders.withLock { $0.append(responder) } }
    var count: Int { responders.withLock { $0.count } }
    func takeAll() -> [Responder] { responders.withLock { held in defer { held = [] }; return held } }
}

/// Counts calls from any thread.
final class Counter: Sendable {
    private let value = Atomic<Int>(0)
    func increment() { value.add(1, ordering: .relaxed) }
    var count: Int { value.load(ordering: .relaxed) }
}

/// An error answer that is easy to check: the code travels in a header and the body.
let testErrorResponse: @Sendable (Int, String, String) -> HTTPResponse = { status, code, message in
    HTTPResponse(status: status, headers: ["X-Error-Code": code], body: Data("\(code): \(message)".utf8))
}

/// Starts a server on 127.0.0.1 port 0, runs `body`, and stops the server whatever happens.
@discardableResult
func withServer<R>(
    maxBodySize: Int = 16 << 20, threadCount: Int = 4, host: String = "127.0.0.1",
    handler: ClosureHandler, _ body: (HTTPServer) throws -> R
) throws -> R {
    let configuration = HTTPServerConfiguration(
        host: host, port: 0, threadCount: threadCount, maxBodySize: maxBodySize,
        errorResponse: testErrorResponse
    )
    let server = HTTPServer(configuration: configuration, handler: handler)
    try server.start()
    defer { server.stop() }
    return try body(server)
}

/// Waits until `condition` holds, polling every 2 ms, for at most `seconds`.
func eventually(within seconds: Double = 10, _ condition: () -> Bool) -> Bool {
    let clock = ContinuousClock()
    let deadline = clock.now.advanced(by: .milliseconds(Int(seconds * 1000)))
    while !condition() {
        if clock.now >= deadline { return false }
        usleep(2_000)
    }
    return true
}

/// The number of threads in this process (entries of /proc/self/task).
func processThreadCount() -> Int {
    guard let directory = opendir("/proc/self/task") else { return -1 }
    defer { closedir(directory) }
    var count = 0
    while let entry = readdir(directory) {
        let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        if name != "." && name != ".." { count += 1 }
    }
    return count
}

/// Echoes the request: method, path and sorted query in the body, id in a header.
func echoHandler() -> ClosureHandler {
    ClosureHandler { request, responder in
        let query = request.query.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: "&")
        var headers: HTTPHeaders = ["X-Request-Id": String(request.head.id)]
        headers.add(name: "X-Remote", value: request.head.remoteAddress ?? "-")
        let body = request.body.isEmpty ? Data("\(request.method) \(request.path) \(query)".utf8) : request.body
        responder.respond(HTTPResponse(status: 200, headers: headers, body: body))
    }
}
