/// Building response heads: status line, headers with automatic framing, `Connection: close`.
extension OriginConnection {
    static func head(_ status: Int, _ headers: [String: String]) -> [UInt8] {
        var text = "HTTP/1.1 \(status) \(reasonPhrase(status))\r\n"
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) {
            text += "\(name): \(value)\r\n"
        }
        text += "\r\n"
        return Array(text.utf8)
    }

    /// Adds `Content-Length` unless the headers already frame the body.
    static func addLength(_ count: Int, to headers: inout [String: String]) {
        if HeaderLookup.value("Content-Length", in: headers) == nil,
           HeaderLookup.value("Transfer-Encoding", in: headers) == nil {
            headers["Content-Length"] = String(count)
        }
    }

    static func outcome(_ request: OriginRequest, _ headers: [String: String]) -> Outcome {
        if request.wantsClose || HeaderLookup.contains(token: "close", in: HeaderLookup.value("Connection", in: headers)) {
            return .close
        }
        return .keepAlive
    }

    static func markClose(_ outcome: Outcome, in headers: inout [String: String]) {
        if outcome == .close, HeaderLookup.value("Connection", in: headers) == nil {
            headers["Connection"] = "close"
        }
    }

    static func reasonPhrase(_ status: Int) -> String {
        switch status {
        case 100: return "Continue"
        case 200: return "OK"
        case 201: return "Created"
        case 202: return "Accepted"
        case 204: return "No Content"
        case 206: return "Partial Content"
        case 301: return "Moved Permanently"
        case 302: return "Found"
        case 303: return "See Other"
        case 304: return "Not Modified"
        case 307: return "Temporary Redirect"
        case 308: return "Permanent Redirect"
        case 400: return "Bad Request"
        case 401: return "Unauthorized"
        case 403: return "Forbidden"
        case 404: return "Not Found"
        case 405: return "Method Not Allowed"
        case 408: return "Request Timeout"
        case 409: return "Conflict"
        case 413: return "Content Too Large"
        case 416: return "Range Not Satisfiable"
        case 429: return "Too Many Requests"
        case 500: return "Internal Server Error"
        case 502: return "Bad Gateway"
        case 503: return "Service Unavailable"
        case 504: return "Gateway Timeout"
        default: return "Status \(status)"
        }
    }
}
