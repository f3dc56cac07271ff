internal import FoundationEssentials

/// One answer of the daemon: its status, header lines and (unless streamed to a file) body.
struct APIResponse {
    var status: Int
    var headerLines: [String]
    var body: [UInt8]

    /// The first header of that name, case-insensitive.
    func header(_ name: String) -> String? {
        let wanted = name.lowercased()
        for line in headerLines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            if line[..<colon].lowercased() == wanted { return line[line.index(after: colon)...].trimmingSpaces }
        }
        return nil
    }

    /// The body as JSON of `type`; a body that is not is exit status 8.
    func decode<Value: Decodable>(_ type: Value.Type) throws -> Value {
        do {
            return try JSONDecoder().decode(type, from: Data(body))
        } catch {
            throw CLIFailure(.badAnswer, "the daemon's answer (HTTP \(status)) is not the JSON expected: \(error)")
        }
    }

    /// The failure an error status stands for: 401 exit 4, 404 exit 5, any other exit 6, with
    /// the daemon's `code` and `message` when the body is its error JSON.
    static func failure(status: Int, body: [UInt8]) -> CLIFailure {
        let exit: ExitStatus = switch status {
        case 401: .unauthorized
        case 404: .notFound
        default: .refused
        }
        if let detail = try? JSONDecoder().decode(APIErrorBody.self, from: Data(body)) {
            return CLIFailure(exit, "\(detail.error.code): \(detail.error.message) (HTTP \(status))")
        }
        return CLIFailure(exit, "the daemon answered HTTP \(status)")
    }
}
