internal import Curl
internal import FoundationEssentials

/// transferd's public HTTP API as transferctl speaks it: one request at a time on the calling
/// thread, each on its own libcurl easy handle (through the project's Curl layer; transferctl
/// imports nothing of the daemon). Made by `ConnectionOptions` for the subcommand that runs.
struct APIClient {
    /// The daemon's base URL, without a trailing slash.
    let server: String
    /// Sent as `Authorization: Bearer`; never printed.
    let token: String?

    /// A request body.
    enum Body {
        case none
        case json([UInt8])
        /// Streamed from a file as `application/octet-stream` (blobs).
        case file(InputFile)
    }

    init(server: String, token: String?) {
        var base = server
        while base.hasSuffix("/") { base.removeLast() }
        self.server = base
        self.token = token
    }

    /// Sends one request; a 2xx answer is returned, any other status and any transport failure
    /// are thrown as the failure they stand for. A 2xx body goes to `sink` when there is one.
    /// `seconds` bounds the whole exchange (nil: only a stall of 60 s ends it).
    @discardableResult
    func send(_ method: String, _ path: String, body: Body = .none, sink: (any ResponseSink)? = nil,
              seconds: Int? = 30) throws -> APIResponse {
        let response = try perform(method, path, body: body, sink: sink, seconds: seconds)
        guard (200..<300).contains(response.status) else {
            throw APIResponse.failure(status: response.status, body: response.body)
        }
        return response
    }

    /// `send` with a JSON body.
    @discardableResult
    func send(_ method: String, _ path: String, json value: some Encodable, seconds: Int? = 30) throws -> APIResponse {
        try send(method, path, body: .json(Self.encode(value)), seconds: seconds)
    }

    static func encode(_ value: some Encodable) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        // Every body transferctl sends is made of strings, numbers and optionals: encoding cannot fail.
        return (try? [UInt8](encoder.encode(value))) ?? Array("{}".utf8)
    }

    private func perform(_ method: String, _ path: String, body: Body, sink: (any ResponseSink)?,
                         seconds: Int?) throws -> APIResponse {
        let handle: EasyHandle
        var source: InputFile?
        do {
            handle = try EasyHandle()
            try handle.set(.url(server + path))
            try handle.set(.allowedProtocols("http,https"))
            try handle.set(.connectTimeoutMilliseconds(10_000))
            if let seconds { try handle.set(.timeoutMilliseconds(seconds * 1000)) }
            try handle.set(.lowSpeed(bytesPerSecond: 1, seconds: 60))
            var headers = ["Accept: application/json", "Expect:"]
            if let token { headers.append("Authorization: Bearer \(token)") }
            switch body {
            case .none:
                if method == "POST" { try handle.set(.body(Data())) }
            case .json(let bytes):
                headers.append("Content-Type: application/json")
                try handle.set(.body(Data(bytes)))
            case .file(let file):
                headers.append("Content-Type: application/octet-stream")
                try handle.set(.upload(size: file.size))
                source = file
            }
            if method != "GET" && method != "POST" || source != nil { try handle.set(.customRequest(method)) }
            try handle.set(.headers(headers))
        } catch {
            throw CLIFailure(.usage, "cannot prepare a request to \(server): \(error)")
        }
        let exchange = HTTPExchange(sink: sink, source: source)
        handle.delegate = exchange
        let code = handle.perform()
        handle.delegate = nil
        if let output = sink as? OutputFile, let writeError = output.writeError {
            throw CLIFailure(.localFile, writeError)
        }
        guard code.isOK else { throw transportFailure(code, detail: handle.errorMessage) }
        return APIResponse(status: handle.responseCode, headerLines: exchange.headerLines, body: exchange.body)
    }

    /// A libcurl failure as transferctl reports it (the server's address, never the token).
    private func transportFailure(_ code: CurlCode, detail: String?) -> CLIFailure {
        let reason = detail ?? code.description
        switch code {
        case .abortedByCallback:
            return CLIFailure(.interrupted, "interrupted")
        case .urlMalformat, .unsupportedProtocol:
            return CLIFailure(.usage, "bad server address \(server): \(reason)")
        default:
            return CLIFailure(.serverUnreachable, "cannot reach the daemon at \(server): \(reason)")
        }
    }
}
