import Foundation

/// How the length of an HTTP/1.1 message body is known (RFC 9112, section 6.3).
enum BodyFraming: Equatable {
    case none
    case length(Int)
    case chunked
    /// The body ends when the sender closes the connection (responses only).
    case untilClose

    /// The framing a message with these headers declares; `fallback` applies when it declares none.
    init(headers: [String: String], fallback: BodyFraming) throws {
        if HeaderLookup.contains(token: "chunked", in: HeaderLookup.value("Transfer-Encoding", in: headers)) {
            self = .chunked
        } else if let length = HeaderLookup.value("Content-Length", in: headers) {
            guard let count = Int(length), count >= 0 else {
                throw SocketError.malformed("bad Content-Length \(length.debugDescription)")
            }
            self = .length(count)
        } else {
            self = fallback
        }
    }
}

extension SocketStream {
    /// Reads a body with the given framing and returns it decoded (chunk framing removed).
    func readBody(_ framing: BodyFraming, until deadline: ContinuousClock.Instant?) throws -> Data {
        switch framing {
        case .none:
            return Data()
        case .length(let count):
            return Data(try read(exactly: count, until: deadline))
        case .untilClose:
            return Data(try readToEnd(until: deadline))
        case .chunked:
            return try readChunkedBody(until: deadline)
        }
    }

    /// Reads `size[;ext] CRLF data CRLF` chunks up to the zero-size one, then the trailer fields.
    private func readChunkedBody(until deadline: ContinuousClock.Instant?) throws -> Data {
        var body = Data()
        while true {
            let line = try readLine(until: deadline)
            let sizeText = String(decoding: line, as: UTF8.self)
                .split(separator: ";", maxSplits: 1).first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
            guard let size = Int(sizeText, radix: 16), size >= 0 else {
                throw SocketError.malformed("bad chunk size \(sizeText.debugDescription)")
            }
            if size == 0 {
                // Trailer fields, if any, end with an empty line.
                while try !readLine(until: deadline).isEmpty {}
                return body
            }
            body.append(contentsOf: try read(exactly: size, until: deadline))
            guard try readLine(until: deadline).isEmpty else {
                throw SocketError.malformed("chunk data longer than its size")
            }
        }
    }
}

/// Encodes chunks for `Transfer-Encoding: chunked`.
enum ChunkEncoder {
    static func chunk(_ data: Data) -> [UInt8] {
        guard !data.isEmpty else { return [] }  // an empty chunk would end the body
        return Array("\(String(data.count, radix: 16))\r\n".utf8) + Array(data) + [13, 10]
    }

    static let last: [UInt8] = Array("0\r\n\r\n".utf8)
}
