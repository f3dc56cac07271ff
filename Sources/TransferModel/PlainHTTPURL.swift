/// The common shape of a request URL, recognised from its bytes: `http://` or `https://`
/// (lowercase), a host of dot-separated labels of lowercase letters, digits and inner hyphens,
/// an optional port of one to five digits, then a path, query and fragment of RFC 3986's
/// characters (unreserved, sub-delims, `:@/?`, and `%` with two hex digits), under the length
/// limit. Foundation's `URL(string:)` parses every such URL with that scheme and host, so
/// `RequestURL.check` passes it without the parse; anything else still goes through Foundation.
///
/// Why: the parse was 8% of a batch's instructions (9k of about 120k per task, callgrind), for
/// URLs that are nearly all of this shape. `PlainHTTPURLTests` holds the two to agree.
enum PlainHTTPURL {
    static func isPlain(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { isPlain($0) }
    }

    static func isPlain(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard bytes.count <= RequestURL.maxLength else { return false }
        var index: Int
        if starts(bytes, with: "https://") {
            index = 8
        } else if starts(bytes, with: "http://") {
            index = 7
        } else {
            return false
        }
        // The host: labels of [a-z0-9-], 1 to 63 bytes, not beginning or ending with a hyphen.
        var labelStart = index
        while true {
            while index < bytes.count, isLabelByte(bytes[index]) { index += 1 }
            let length = index - labelStart
            guard length >= 1, length <= 63, bytes[labelStart] != UInt8(ascii: "-"), bytes[index - 1] != UInt8(ascii: "-") else {
                return false
            }
            guard index < bytes.count, bytes[index] == UInt8(ascii: ".") else { break }
            index += 1
            labelStart = index
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: ":") {
            index += 1
            let digits = index
            while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") { index += 1 }
            guard (1...5).contains(index - digits) else { return false }
        }
        // Nothing after the authority, or a path, query or fragment.
        guard index == bytes.count || bytes[index] == UInt8(ascii: "/") || bytes[index] == UInt8(ascii: "?") else { return false }
        var fragment = false
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "%") {
                guard index + 2 < bytes.count, isHex(bytes[index + 1]), isHex(bytes[index + 2]) else { return false }
                index += 3
                continue
            }
            if byte == UInt8(ascii: "#") {
                guard !fragment else { return false }  // one '#' only
                fragment = true
            } else if !isPathByte(byte) {
                return false
            }
            index += 1
        }
        return true
    }

    private static func starts(_ bytes: UnsafeBufferPointer<UInt8>, with prefix: StaticString) -> Bool {
        guard bytes.count >= prefix.utf8CodeUnitCount else { return false }
        return prefix.withUTF8Buffer { wanted in
            for offset in wanted.indices where bytes[offset] != wanted[offset] { return false }
            return true
        }
    }

    private static func isLabelByte(_ byte: UInt8) -> Bool {
        (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
            || byte == UInt8(ascii: "-")
    }

    private static func isHex(_ byte: UInt8) -> Bool {
        (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "f"))
            || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "F"))
    }

    /// RFC 3986 pchar plus `/` and `?`: unreserved, sub-delims, `:` and `@`.
    private static func isPathByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        case UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"),
             UInt8(ascii: "!"), UInt8(ascii: "$"), UInt8(ascii: "&"), UInt8(ascii: "'"), UInt8(ascii: "("), UInt8(ascii: ")"),
             UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: ","), UInt8(ascii: ";"), UInt8(ascii: "="),
             UInt8(ascii: ":"), UInt8(ascii: "@"), UInt8(ascii: "/"), UInt8(ascii: "?"):
            true
        default:
            false
        }
    }
}
