internal import HTTPServer
internal import Synchronization

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

    /// 16 hex digits that look random and never repeat within the process: a count mixed with
    /// a key drawn once at start (SplitMix64's finalizer is a bijection, so distinct counts give
    /// distinct ids). A draw from the system per request was a getrandom(2) call on every request.
    static func generate() -> String {
        var z = key &+ issued.wrappingAdd(1, ordering: .relaxed).oldValue &* 0x9E37_79B9_7F4A_7C15
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        z ^= z >> 31
        return String(unsafeUninitializedCapacity: 16) { hex in
            for index in 0..<16 {
                let nibble = UInt8(truncatingIfNeeded: z >> UInt64(60 - 4 * index)) & 0xf
                hex[index] = nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10
            }
            return 16
        }
    }

    private static let key = UInt64.random(in: .min ... .max)
    private static let issued = Atomic<UInt64>(0)
}
