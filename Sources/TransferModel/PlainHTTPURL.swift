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
        return text.withUTF8 { authority(of: $0) != nil }
    }

    /// "scheme://host:port" of a plain URL, as `RequestURL.origin` makes it from Foundation's
    /// parse (the scheme's default port filled in); nil for any other URL, and for a port past
    /// 65535. Every download is scheduled by it (the per-host cap): the parse was 8k
    /// instructions of a batch task's (callgrind).
    static func origin(_ text: String) -> String? {
        var text = text
        return text.withUTF8 { bytes -> String? in
            guard let authority = authority(of: bytes) else { return nil }
            let port = authority.port ?? (authority.secure ? 443 : 80)
            guard port <= 65535 else { return nil }
            // Scheme and host are already lowercase (`authority`), so they are taken as they are.
            let schemeAndHost = String(decoding: UnsafeBufferPointer(rebasing: bytes[..<authority.hostEnd]), as: UTF8.self)
            return schemeAndHost + ":" + String(port)
        }
    }

    /// What a plain URL's bytes say before its path: whether it is https, where its host ends,
    /// and its port if written.
    private struct Authority {
        let secure: Bool
        let hostEnd: Int
        let port: Int?
    }

    /// The authority of `bytes` if they are a plain URL, else nil.
    private static func authority(of bytes: UnsafeBufferPointer<UInt8>) -> Authority? {
        guard bytes.count <= RequestURL.maxLength else { return nil }
        var index: Int
        if starts(bytes, with: "https://") {
            index = 8
        } else if starts(bytes, with: "http://") {
            index = 7
        } else {
            return nil
        }
        let secure = index == 8
        // The host: labels of [a-z0-9-], 1 to 63 bytes, not beginning or ending with a hyphen.
        var labelStart = index
        while true {
            while index < bytes.count, isLabelByte(bytes[index]) { index += 1 }
            let length = index - labelStart
            guard length >= 1, length <= 63, bytes[labelStart] != UInt8(ascii: "-"), bytes[index - 1] != UInt8(ascii: "-") else {
                return nil
            }
            guard index < bytes.count, bytes[index] == UInt8(ascii: ".") else { break }
            index += 1
            labelStart = index
        }
        let hostEnd = index
        var port: Int?
        if index < bytes.count, bytes[index] == UInt8(ascii: ":") {
            index += 1
            let digits = index
            var value = 0
            while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") {
                value = value * 10 + Int(bytes[index] - UInt8(ascii: "0"))
                index += 1
            }
            guard (1...5).contains(index - digits) else { return nil }
            port = value
        }
        // Nothing after the authority, or a path, query or fragment.
        guard index == bytes.count || bytes[index] == UInt8(ascii: "/") || bytes[index] == UInt8(ascii: "?") else { return nil }
        var fragment = false
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "%") {
                guard index + 2 < bytes.count, isHex(bytes[index + 1]), isHex(bytes[index + 2]) else { return nil }
                index += 3
                continue
            }
            if byte == UInt8(ascii: "#") {
                guard !fragment else { return nil }  // one '#' only
                fragment = true
            } else if !isPathByte(byte) {
                return nil
            }
            index += 1
        }
        return Authority(secure: secure, hostEnd: hostEnd, port: port)
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
