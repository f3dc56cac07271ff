/// Shared checks of client input, each throwing `InputError.invalidValue` with the field's path.
enum Validate {
    /// A time interval in seconds: positive, finite, at most ten years.
    static func interval(_ value: Double, _ field: String) throws {
        guard value.isFinite, value > 0, value <= 315_360_000 else {
            throw InputError.invalidValue(field: field, message: "must be a number of seconds above 0 and at most 315360000 (ten years)")
        }
    }

    /// RFC 9110 token characters (method and header names).
    static func isToken(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): return true
            default: return "!#$%&'*+-.^_`|~".utf8.contains(byte)
            }
        }
    }

    /// A header name must be a token and its value must not contain CR, LF or NUL (no injection).
    static func header(name: String, value: String, _ field: String) throws {
        guard isToken(name) else {
            throw InputError.invalidValue(field: field, message: "header name \"\(name)\" is not a valid HTTP token")
        }
        guard !value.utf8.contains(where: { $0 == 13 || $0 == 10 || $0 == 0 }) else {
            throw InputError.invalidValue(field: field, message: "header \(name) contains a line break")
        }
    }
}
