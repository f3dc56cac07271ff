internal import FoundationEssentials

/// HTTPURLResponse as JSON. Repeated header fields are joined with ", ".
public struct ResponseInfo: Codable, Sendable, Equatable {
    public var statusCode: Int
    public var headers: [String: String]
    @NullEncoded public var mimeType: String?
    @NullEncoded public var textEncodingName: String?
    @NullEncoded public var expectedContentLength: Int?
    @NullEncoded public var suggestedFilename: String?
    public var url: String

    public init(statusCode: Int, headers: [String: String], url: String) {
        self.statusCode = statusCode
        self.headers = headers
        self.url = url
        let contentType = Self.value(of: "Content-Type", in: headers)
        // Split on the byte: splitting Characters walks grapheme boundaries (4% of the engine
        // thread's instructions for a 16 KiB download, with the trims).
        let parts = contentType?.utf8.split(separator: UInt8(ascii: ";")).map { Substring($0).trimmed() } ?? []
        mimeType = parts.first.map { $0.lowercased() }.flatMap { $0.isEmpty ? nil : $0 }
        textEncodingName = parts.dropFirst().first { $0.lowercased().hasPrefix("charset=") }
            .map { $0.dropFirst("charset=".count).trimmed(["\"", " "]).lowercased() }
        expectedContentLength = Self.value(of: "Content-Length", in: headers).flatMap { Int($0) }
        suggestedFilename = Self.suggestedFilename(contentDisposition: Self.value(of: "Content-Disposition", in: headers), url: url)
    }

    /// A header's value by case-insensitive name.
    public static func value(of name: String, in headers: [String: String]) -> String? {
        headers.first { $0.key.equalsIgnoringASCIICase(name) }?.value
    }

    /// The filename from Content-Disposition (RFC 6266, `filename*` first), else the URL's
    /// last path component, else "Unknown" (Apple's fallback); always a plain file name.
    static func suggestedFilename(contentDisposition: String?, url: String) -> String {
        if let disposition = contentDisposition, let name = ContentDisposition.filename(in: disposition),
           let sanitised = sanitise(name) {
            return sanitised
        }
        if let plain = plainLastComponent(of: url) { return String(plain) }
        if let last = URL(string: url)?.lastPathComponent, last != "/", let sanitised = sanitise(last) {
            return sanitised
        }
        return "Unknown"
    }

    /// The last path component of a URL whose last component needs neither decoding nor
    /// cleaning (unreserved characters only, no dot at either end), read off its bytes; nil for any
    /// other URL, which Foundation's URL parses. Every download asks once: the parse was 1% of
    /// a small download's CPU (issue 18).
    static func plainLastComponent(of url: String) -> Substring? {
        let bytes = url.utf8
        // "scheme://": the first colon ends the scheme (a plain scan: `firstRange(of:)` builds a
        // searcher per call, 1.4% of a small download's CPU).
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")),
              bytes[bytes.index(after: colon)...].starts(with: "//".utf8) else { return nil }
        let afterAuthority = bytes[bytes.index(colon, offsetBy: 3)...]
        guard let pathStart = afterAuthority.firstIndex(of: UInt8(ascii: "/")) else { return nil }
        let path = bytes[pathStart...].prefix { $0 != UInt8(ascii: "?") && $0 != UInt8(ascii: "#") }
        guard let lastSlash = path.lastIndex(of: UInt8(ascii: "/")) else { return nil }
        let last = path[path.index(after: lastSlash)...]
        // What `sanitise` would change: a dot at either end (hidden, trailing), over 255 bytes.
        guard let first = last.first, let end = last.last, first != UInt8(ascii: "."), end != UInt8(ascii: "."),
              last.count <= 255, last.allSatisfy(isUnreserved) else { return nil }
        return Substring(last)
    }

    /// RFC 3986's unreserved characters: nothing in them is decoded or cleaned.
    private static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
            return true
        default:
            return false
        }
    }

    /// The last component only (no folders, either slash), no control characters, not hidden,
    /// at most 255 UTF-8 bytes.
    private static func sanitise(_ name: String) -> String? {
        let base = name.split(whereSeparator: { $0 == "/" || $0 == "\\" }).last.map(String.init) ?? ""
        var cleaned = String(base.unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7f }).trimmed([" ", "."])
        while cleaned.utf8.count > 255 { cleaned.removeLast() }
        return cleaned.isEmpty ? nil : cleaned
    }
}
