internal import FoundationEssentials

/// Base64 as clients send it: standard alphabet (RFC 4648), wrapped lines and spaces allowed,
/// anything else refused (Foundation's .ignoreUnknownCharacters would take "@@@@" as nothing).
enum Base64Input {
    static func decode(_ text: String) -> Data? {
        // By Character: "\r\n" is one grapheme, so it must be listed beside "\r" and "\n".
        Data(base64Encoded: String(text.filter { ![" ", "\t", "\r", "\n", "\r\n"].contains($0) }))
    }
}
