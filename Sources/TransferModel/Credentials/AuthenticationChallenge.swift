/// One challenge of a `WWW-Authenticate` field (RFC 9110 11.6.1): a scheme and either auth
/// parameters or a token68. swift-http-structured-headers does not cover this field (it predates
/// structured fields), so `parse` reads the grammar itself:
///
///     WWW-Authenticate = #challenge
///     challenge  = auth-scheme [ 1*SP ( token68 / #auth-param ) ]
///     auth-param = token BWS "=" BWS ( token / quoted-string )
///
/// Commas separate both challenges and parameters: a token after a comma that is not followed by
/// "=" starts the next challenge.
package struct AuthenticationChallenge: Sendable, Equatable {
    package var scheme: String
    /// Parameters in order, names lower-cased (they compare case-insensitively), values unquoted.
    var parameters: [Parameter]
    var token68: String?

    struct Parameter: Sendable, Equatable {
        var name: String
        var value: String
    }

    init(scheme: String, parameters: [Parameter] = [], token68: String? = nil) {
        self.scheme = scheme
        self.parameters = parameters
        self.token68 = token68
    }

    /// The realm the server named (case-sensitive, as RFC 9110 11.5 says), if any.
    package var realm: String? { parameter("realm") }

    func parameter(_ name: String) -> String? {
        parameters.first { $0.name == name.lowercased() }?.value
    }

    /// Every challenge of every field line, in order. Malformed parts are skipped, never fatal: a
    /// server's typo must not fail the task, only leave that challenge out.
    package static func parse(_ fieldLines: [String]) -> [AuthenticationChallenge] {
        fieldLines.flatMap { line in
            var reader = Reader(Array(line.utf8))
            return reader.challenges()
        }
    }

    /// A cursor over one field line's bytes.
    private struct Reader {
        let bytes: [UInt8]
        var index = 0

        init(_ bytes: [UInt8]) { self.bytes = bytes }

        mutating func challenges() -> [AuthenticationChallenge] {
            var result: [AuthenticationChallenge] = []
            while true {
                skip { $0 == .space || $0 == .tab || $0 == .comma }
                guard index < bytes.count else { return result }
                guard let scheme = token() else {
                    index += 1  // not a token character: skip it and look for the next challenge
                    continue
                }
                var challenge = AuthenticationChallenge(scheme: scheme)
                readParameters(into: &challenge)
                result.append(challenge)
            }
        }

        /// Reads a token68 or auth-params after the scheme, up to the next challenge.
        private mutating func readParameters(into challenge: inout AuthenticationChallenge) {
            var first = true
            while true {
                let separated = skipSeparators()
                guard index < bytes.count else { return }
                let start = index
                // A token68 may stand right after the scheme (a blank, no comma): token68
                // characters, then "="s.
                if first, !separated, let value = token68() {
                    challenge.token68 = value
                    return
                }
                index = start
                guard let name = token() else { return }
                skip { $0 == .space || $0 == .tab }
                guard peek == .equals else {
                    // A bare token after a comma is the next challenge's scheme.
                    index = start
                    return
                }
                index += 1
                skip { $0 == .space || $0 == .tab }
                let value: String?
                if peek == .quote {
                    value = quotedString()
                } else {
                    value = token()
                }
                guard let value else {
                    // No value: this challenge is malformed from here; resume at the next comma.
                    skip { $0 != .comma }
                    return
                }
                if !first && !separated { return }  // two parameters without a comma: stop here
                challenge.parameters.append(Parameter(name: name.lowercased(), value: value))
                first = false
            }
        }

        /// Skips blanks and commas; returns whether a comma was among them.
        private mutating func skipSeparators() -> Bool {
            var comma = false
            while index < bytes.count, bytes[index] == .space || bytes[index] == .tab || bytes[index] == .comma {
                if bytes[index] == .comma { comma = true }
                index += 1
            }
            return comma
        }

        /// A token68 that ends the challenge (followed by blanks and a comma or the end).
        private mutating func token68() -> String? {
            let start = index
            while index < bytes.count, Self.isToken68(bytes[index]) { index += 1 }
            guard index > start else { return nil }
            while index < bytes.count, bytes[index] == .equals { index += 1 }
            let end = index
            skip { $0 == .space || $0 == .tab }
            guard index == bytes.count || bytes[index] == .comma else { return nil }
            // "realm=x" would read as token68 "realm=" followed by "x": not at a comma, so refused above.
            return String(decoding: bytes[start..<end], as: UTF8.self)
        }

        private mutating func token() -> String? {
            let start = index
            while index < bytes.count, Self.isTokenCharacter(bytes[index]) { index += 1 }
            return index > start ? String(decoding: bytes[start..<index], as: UTF8.self) : nil
        }

        /// A quoted-string with its quotes removed and backslash escapes resolved; nil when the
        /// closing quote is missing.
        private mutating func quotedString() -> String? {
            index += 1  // the opening quote
            var value: [UInt8] = []
            while index < bytes.count {
                let byte = bytes[index]
                index += 1
                if byte == .quote { return String(decoding: value, as: UTF8.self) }
                if byte == .backslash {
                    guard index < bytes.count else { return nil }
                    value.append(bytes[index])
                    index += 1
                } else {
                    value.append(byte)
                }
            }
            return nil
        }

        private var peek: UInt8? { index < bytes.count ? bytes[index] : nil }

        private mutating func skip(while condition: (UInt8) -> Bool) {
            while index < bytes.count, condition(bytes[index]) { index += 1 }
        }

        /// RFC 9110 tchar.
        static func isTokenCharacter(_ byte: UInt8) -> Bool {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): return true
            default: return "!#$%&'*+-.^_`|~".utf8.contains(byte)
            }
        }

        /// RFC 9110 token68 characters (before the trailing "="s).
        static func isToken68(_ byte: UInt8) -> Bool {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): return true
            default: return "-._~+/".utf8.contains(byte)
            }
        }
    }
}

private extension UInt8 {
    static let space = UInt8(ascii: " ")
    static let tab = UInt8(ascii: "\t")
    static let comma = UInt8(ascii: ",")
    static let equals = UInt8(ascii: "=")
    static let quote = UInt8(ascii: "\"")
    static let backslash = UInt8(ascii: "\\")
}
