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
    /// Reads the line's UTF-8 bytes in place (the delimiters are ASCII): walking Characters, or
    /// the generic UTF8View searches and trims, were 18k instructions a 16 KiB download's head
    /// on the engine thread (callgrind, ten lines); the bytes are read once here.
    mutating func consume(_ line: String) -> ResponseHead? {
        var line = line
        return line.withUTF8 { consume(bytes: $0) }
    }

    private mutating func consume(bytes: UnsafeBufferPointer<UInt8>) -> ResponseHead? {
        if bytes.starts(with: "HTTP/".utf8) {
            statusCode = Self.statusCode(of: bytes)
            fields = []
            fields.reserveCapacity(Self.expectedFields)
            return nil
        }
        if bytes.isEmpty {
            guard let statusCode else { return nil }
            defer { self.statusCode = nil; fields = [] }
            return ResponseHead(statusCode: statusCode, fields: fields)
        }
        if bytes[0] == 0x20 || bytes[0] == 0x09, !fields.isEmpty {
            fields[fields.count - 1].value += " " + Self.trimmedText(bytes[...])  // obsolete line folding
            return nil
        }
        guard let colon = bytes.firstIndex(of: 0x3A) else { return nil }
        fields.append((Self.text(bytes[..<colon]), Self.trimmedText(bytes[(colon + 1)...])))
        return nil
    }

    /// Room for a usual head's fields, so the array is not grown field by field.
    private static let expectedFields = 16

    private static func text(_ bytes: Slice<UnsafeBufferPointer<UInt8>>) -> String {
        String(decoding: UnsafeBufferPointer(rebasing: bytes), as: UTF8.self)
    }

    /// `bytes` without the spaces and tabs at either end (as `trimmed()`).
    private static func trimmedText(_ bytes: Slice<UnsafeBufferPointer<UInt8>>) -> String {
        text(bytes.base[OptionalWhitespace.trimmedBounds(bytes)])
    }

    /// The status line's second word as a number ("HTTP/1.1 200 OK" -> 200).
    private static func statusCode(of bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        guard var start = bytes.firstIndex(of: 0x20) else { return nil }
        while start < bytes.endIndex, bytes[start] == 0x20 { start += 1 }
        let end = bytes[start...].firstIndex(of: 0x20) ?? bytes.endIndex
        guard start < end else { return nil }
        return Int(text(bytes[start..<end]))
    }
}
