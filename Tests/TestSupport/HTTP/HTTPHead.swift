import Foundation

/// The start line and header fields of one HTTP/1.1 message, as received.
struct HTTPHead {
    /// The first line, split on its first two spaces: method, target, version for a request;
    /// version, status, reason for a response (the reason may be empty).
    var startLine: (String, String, String)
    /// The header fields in the order received.
    var fields: [(name: String, value: String)]

    /// Parses a header block (without its final CRLFCRLF).
    init(parsing bytes: [UInt8]) throws {
        guard let text = String(validating: bytes, as: UTF8.self) ?? String(bytes: bytes, encoding: .isoLatin1) else {
            throw SocketError.malformed("header block is not text")
        }
        var lines = text.split(separator: "\r\n", omittingEmptySubsequences: false).map(String.init)
        guard !lines.isEmpty else { throw SocketError.malformed("empty header block") }
        let first = lines.removeFirst()
        let parts = first.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false).map(String.init)
        guard parts.count >= 2, !parts[0].isEmpty, !parts[1].isEmpty else {
            throw SocketError.malformed("bad start line \(first.debugDescription)")
        }
        startLine = (parts[0], parts[1], parts.count > 2 ? parts[2] : "")
        fields = []
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else {
                throw SocketError.malformed("bad header line \(line.debugDescription)")
            }
            let name = String(line[..<colon])
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            guard !name.isEmpty, !name.contains(" ") else {
                throw SocketError.malformed("bad header name \(name.debugDescription)")
            }
            fields.append((name, value))
        }
    }

    /// The fields as a dictionary keyed by the name as first received; repeated fields are joined
    /// with ", " (RFC 9110, section 5.3).
    var headerDictionary: [String: String] {
        var result: [String: String] = [:]
        var keys: [String: String] = [:]  // lowercased name -> first spelling
        for (name, value) in fields {
            let lower = name.lowercased()
            if let key = keys[lower] {
                result[key] = result[key].map { "\($0), \(value)" } ?? value
            } else {
                keys[lower] = name
                result[name] = value
            }
        }
        return result
    }
}

/// Case-insensitive lookup in a header dictionary, shared by requests and responses.
enum HeaderLookup {
    static func value(_ name: String, in headers: [String: String]) -> String? {
        if let exact = headers[name] { return exact }
        let lower = name.lowercased()
        return headers.first { $0.key.lowercased() == lower }?.value
    }

    /// True if a comma-separated header (Connection, Transfer-Encoding) lists `token`.
    static func contains(token: String, in value: String?) -> Bool {
        guard let value else { return false }
        return value.split(separator: ",").contains {
            $0.trimmingCharacters(in: .whitespaces).lowercased() == token
        }
    }
}
