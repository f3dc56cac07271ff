internal import TransferModel

/// One complete response head: a status line and its header fields, in order.
package struct ResponseHead: Equatable {
    package var statusCode: Int
    package var fields: [(name: String, value: String)]

    package static func == (a: ResponseHead, b: ResponseHead) -> Bool {
        a.statusCode == b.statusCode && a.fields.elementsEqual(b.fields) { $0 == $1 }
    }

    /// Fields by name, under the first spelling seen; repeated fields joined with ", " (RFC 9110
    /// 5.3). A repeat is found by looking back over the few fields before it, not through a
    /// dictionary of lowercased copies (two allocations per field, for every response).
    package var joined: [String: String] {
        var result = [String: String](minimumCapacity: fields.count)
        for (index, (name, value)) in fields.enumerated() {
            if let first = fields[..<index].first(where: { $0.name.equalsIgnoringASCIICase(name) }) {
                result[first.name]! += ", " + value
            } else {
                result[name] = value
            }
        }
        return result
    }

    package func value(_ name: String) -> String? {
        fields.first { $0.name.equalsIgnoringASCIICase(name) }?.value
    }
}

/// Assembles header lines from libcurl's header callback into response heads. A value type fed
/// line by line, so it is tested without a network.
struct ResponseHeadParser {
    private var statusCode: Int?
    private var fields: [(name: String, value: String)] = []

    /// Feeds one line (without CRLF); returns the head when `line` is the blank line ending it.
    /// Reads the UTF-8 bytes (the delimiters are ASCII): cheaper than walking Characters, and
    /// a response head's lines are parsed for every transfer.
    mutating func consume(_ line: String) -> ResponseHead? {
        let bytes = line.utf8
        if bytes.starts(with: "HTTP/".utf8) {
            statusCode = Self.statusCode(of: line)
            fields = []
            return nil
        }
        if bytes.isEmpty {
            guard let statusCode else { return nil }
            defer { self.statusCode = nil; fields = [] }
            return ResponseHead(statusCode: statusCode, fields: fields)
        }
        if let first = bytes.first, first == 0x20 || first == 0x09, !fields.isEmpty {
            fields[fields.count - 1].value += " " + line.trimmed()  // obsolete line folding
            return nil
        }
        guard let colon = bytes.firstIndex(of: 0x3A) else { return nil }
        fields.append((String(line[..<colon]), line[bytes.index(after: colon)...].trimmed()))
        return nil
    }

    /// The status line's second word as a number ("HTTP/1.1 200 OK" -> 200).
    private static func statusCode(of line: String) -> Int? {
        let bytes = line.utf8
        guard var start = bytes.firstIndex(of: 0x20) else { return nil }
        while start < bytes.endIndex, bytes[start] == 0x20 { start = bytes.index(after: start) }
        let end = bytes[start...].firstIndex(of: 0x20) ?? bytes.endIndex
        guard start < end else { return nil }
        return Int(Substring(bytes[start..<end]))
    }
}
