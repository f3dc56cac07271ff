public import FoundationEssentials
internal import TransferModel

/// A decoded `data:` URL (RFC 2397): its media type, charset and bytes. Parsed by the engine
/// when a task of this scheme starts; libcurl has no data: support, so the daemon answers it.
///
///     dataurl   := "data:" [ mediatype ] [ ";base64" ] "," data
///     mediatype := [ type "/" subtype ] *( ";" parameter )
///
/// As URLSession: no media type means `text/plain;charset=US-ASCII`; a media type without a
/// charset has none (textEncodingName nil). The data is percent-decoded, then, with `;base64`,
/// base64-decoded (ASCII whitespace ignored, padding optional, as the WHATWG fetch standard).
public struct DataURL: Sendable, Equatable {
    /// Lowercased, e.g. "text/plain".
    public var mimeType: String
    /// The charset parameter as written (e.g. "US-ASCII", "utf-8"), nil when there is none.
    public var textEncodingName: String?
    public var data: Data

    /// Why a data: URL cannot be decoded.
    public enum Failure: Error, Sendable, Equatable {
        case notDataURL
        case missingComma
        case invalidBase64
    }

    public init(parsing text: String) throws(Failure) {
        guard text.count >= 5, text.prefix(5).lowercased() == "data:" else { throw .notDataURL }
        var rest = text.dropFirst(5)
        if let hash = rest.firstIndex(of: "#") { rest = rest[..<hash] }  // a fragment is not data
        guard let comma = rest.firstIndex(of: ",") else { throw .missingComma }
        var parameters = rest[..<comma].split(separator: ";", omittingEmptySubsequences: false).map { $0.trimmed() }
        let isBase64 = parameters.count > 1 && parameters.last?.lowercased() == "base64"
        if isBase64 { parameters.removeLast() }
        let type = parameters.first ?? ""
        var charset: String?
        for parameter in parameters.dropFirst() {
            guard let equals = parameter.firstIndex(of: "=") else { continue }
            if parameter[..<equals].trimmed().lowercased() == "charset" {
                let value = String(decoding: PercentDecoding.bytes(parameter[parameter.index(after: equals)...]), as: UTF8.self)
                charset = value.trimmed(["\"", " "])
            }
        }
        if type.contains("/") {
            mimeType = type.lowercased()
            textEncodingName = charset
        } else {
            // No (or no valid) media type: text/plain, US-ASCII unless a charset is given.
            mimeType = "text/plain"
            textEncodingName = charset ?? "US-ASCII"
        }
        let bytes = PercentDecoding.bytes(rest[rest.index(after: comma)...])
        if isBase64 {
            guard let decoded = Self.forgivingBase64(bytes) else { throw .invalidBase64 }
            data = decoded
        } else {
            data = Data(bytes)
        }
    }

    /// Base64 with ASCII whitespace skipped and the final padding optional.
    private static func forgivingBase64(_ bytes: [UInt8]) -> Data? {
        var text = String(decoding: bytes.filter { ![0x09, 0x0a, 0x0c, 0x0d, 0x20].contains($0) }, as: UTF8.self)
        if text.utf8.count % 4 == 0, text.hasSuffix("==") { text.removeLast(2) } else if text.utf8.count % 4 == 0, text.hasSuffix("=") { text.removeLast() }
        guard text.utf8.count % 4 != 1, !text.contains("=") else { return nil }
        text += String(repeating: "=", count: (4 - text.utf8.count % 4) % 4)
        return Data(base64Encoded: text)
    }
}
