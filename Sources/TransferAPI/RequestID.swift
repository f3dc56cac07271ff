internal import HTTPServer

/// The id a request is known by in the access log (`http.request.id`) and in the `X-Request-Id`
/// response header: the client's own `X-Request-Id` when it is sane (1 to 128 characters of
/// letters, digits and `-_.:`, so it cannot forge log fields), else 16 random hex digits.
/// Chosen by `APIHandler` once per request.
enum RequestID {
    static let header = "X-Request-Id"

    static func of(_ headers: HTTPHeaders) -> String {
        if let sent = headers[header], isSane(sent) { return sent }
        return generate()
    }

    static func isSane(_ id: String) -> Bool {
        let utf8 = id.utf8
        return (1...128).contains(utf8.count) && utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: ":"):
                return true
            default:
                return false
            }
        }
    }

    static func generate() -> String {
        let hex = String(UInt64.random(in: .min ... .max), radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }
}
