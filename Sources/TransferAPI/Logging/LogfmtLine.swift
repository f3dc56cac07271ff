/// One logfmt line being built: `key=value` pairs separated by spaces. A value is quoted when it
/// is empty or holds a space, `=`, `"` or a control character; inside quotes `"` and `\` are
/// escaped and newlines, tabs and other control characters are written as escapes, so an event is
/// always exactly one line. Keys keep only letters, digits and `._-` (others become `_`).
struct LogfmtLine {
    private(set) var bytes: [UInt8] = []

    init() { bytes.reserveCapacity(256) }

    mutating func append(_ key: String, _ value: String) {
        if !bytes.isEmpty { bytes.append(UInt8(ascii: " ")) }
        for byte in key.utf8 { bytes.append(Self.isKeyByte(byte) ? byte : UInt8(ascii: "_")) }
        if key.isEmpty { bytes.append(UInt8(ascii: "_")) }
        bytes.append(UInt8(ascii: "="))
        let utf8 = value.utf8
        guard utf8.isEmpty || utf8.contains(where: Self.needsQuotes) else {
            bytes.append(contentsOf: utf8)
            return
        }
        bytes.append(UInt8(ascii: "\""))
        for byte in utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes.append(contentsOf: #"\""#.utf8)
            case UInt8(ascii: "\\"): bytes.append(contentsOf: #"\\"#.utf8)
            case UInt8(ascii: "\n"): bytes.append(contentsOf: #"\n"#.utf8)
            case UInt8(ascii: "\r"): bytes.append(contentsOf: #"\r"#.utf8)
            case UInt8(ascii: "\t"): bytes.append(contentsOf: #"\t"#.utf8)
            case 0..<0x20, 0x7F:
                bytes.append(contentsOf: #"\u00"#.utf8)
                bytes.append(Self.hex[Int(byte >> 4)])
                bytes.append(Self.hex[Int(byte & 0xF)])
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    /// The line with its newline.
    func finished() -> [UInt8] { bytes + [UInt8(ascii: "\n")] }

    private static let hex = Array("0123456789abcdef".utf8)

    private static func needsQuotes(_ byte: UInt8) -> Bool {
        byte <= 0x20 || byte == 0x7F || byte == UInt8(ascii: "=") || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\")
    }

    private static func isKeyByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"):
            return true
        default:
            return false
        }
    }
}
