/// A strict reader of JSON text (RFC 8259) straight from a request body's bytes, for the bodies
/// the daemon reads by the thousand (`TaskCreate+Bytes`, `TaskBatchCreate+Bytes`).
///
/// It is sound, not complete: it reads only what it is sure `JSONCoding.decoder` reads the same
/// way, and for anything else (an escape in a key, a lone surrogate, bytes that are not UTF-8, a
/// number with an exponent, a trailing comma, deep nesting) it throws `Unread`. Its callers then
/// decode the body with `JSONCoding.decoder`, which stays the reference for every value and
/// every error. Why: Foundation's decoder, with Codable's boxing, took about a third of the CPU
/// of a batch of task creations (issue 18).
///
/// Lives inside one `withUnsafeBytes` call of its caller; not Sendable.
struct JSONByteReader {
    /// The body is not one the reader is sure of; decode it with `JSONCoding.decoder`.
    struct Unread: Error {}

    private let bytes: UnsafeRawBufferPointer
    /// The next byte to read.
    private(set) var index = 0

    /// Nested arrays and objects deeper than this are left to the reference decoder.
    private static let depthLimit = 64

    init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    /// Bytes not read yet.
    var remaining: Int { bytes.count - index }

    /// The bytes from `start` up to the reader's position (for a value read with `skipValue`).
    func bytes(from start: Int) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: bytes[start..<index])
    }

    /// Throws unless only whitespace is left.
    mutating func end() throws(Unread) {
        skipSpace()
        guard index == bytes.count else { throw Unread() }
    }

    // MARK: structure

    /// Reads `{`.
    mutating func beginObject() throws(Unread) { try expect(UInt8(ascii: "{")) }

    /// The next member's key (its bytes, which hold no escape) with its `:` read, or nil once
    /// the object's `}` is read. `first` is true before the first member.
    mutating func nextKey(_ first: inout Bool) throws(Unread) -> UnsafeRawBufferPointer? {
        guard try another(&first, before: UInt8(ascii: "}")) else { return nil }
        try expect(UInt8(ascii: "\""))
        let start = index
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let key = UnsafeRawBufferPointer(rebasing: bytes[start..<index])
                index += 1
                try expect(UInt8(ascii: ":"))
                return key
            }
            // Escaped, control or non-ASCII keys: no name the readers know has one.
            guard byte >= 0x20, byte < 0x80, byte != UInt8(ascii: "\\") else { throw Unread() }
            index += 1
        }
        throw Unread()
    }

    /// Reads `[`.
    mutating func beginArray() throws(Unread) { try expect(UInt8(ascii: "[")) }

    /// Whether another element follows (its `,` read); false once the array's `]` is read.
    mutating func nextElement(_ first: inout Bool) throws(Unread) -> Bool {
        guard try another(&first, before: UInt8(ascii: "]")) else { return false }
        // A `,` before `]` is not JSON (FoundationEssentials' decoder takes it; the API refuses it).
        skipSpace()
        guard index < bytes.count, bytes[index] != UInt8(ascii: "]") else { throw Unread() }
        return true
    }

    // MARK: values

    /// A string value, unescaped.
    mutating func string() throws(Unread) -> String {
        try expect(UInt8(ascii: "\""))
        let start = index
        var ascii = true
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let text = UnsafeRawBufferPointer(rebasing: bytes[start..<index])
                index += 1
                if ascii { return String(decoding: text, as: UTF8.self) }
                guard let valid = String(validating: text, as: UTF8.self) else { throw Unread() }
                return valid
            }
            if byte == UInt8(ascii: "\\") { return try escapedString(from: start) }
            guard byte >= 0x20 else { throw Unread() }
            if byte >= 0x80 { ascii = false }
            index += 1
        }
        throw Unread()
    }

    /// The rest of a string that has an escape; `start` is its first byte after the quote.
    private mutating func escapedString(from start: Int) throws(Unread) -> String {
        var text: [UInt8] = Array(bytes[start..<index])
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            switch byte {
            case UInt8(ascii: "\""):
                guard let valid = String(validating: text, as: UTF8.self) else { throw Unread() }
                return valid
            case UInt8(ascii: "\\"):
                guard index < bytes.count else { throw Unread() }
                let escape = bytes[index]
                index += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): text.append(escape)
                case UInt8(ascii: "b"): text.append(0x08)
                case UInt8(ascii: "f"): text.append(0x0C)
                case UInt8(ascii: "n"): text.append(0x0A)
                case UInt8(ascii: "r"): text.append(0x0D)
                case UInt8(ascii: "t"): text.append(0x09)
                case UInt8(ascii: "u"):
                    // Surrogates (pairs or lone) are left to the reference decoder.
                    let code = try hex4()
                    guard !(0xD800...0xDFFF).contains(code), let scalar = Unicode.Scalar(code) else { throw Unread() }
                    text.append(contentsOf: String(scalar).utf8)
                default: throw Unread()
                }
            default:
                guard byte >= 0x20 else { throw Unread() }
                text.append(byte)
            }
        }
        throw Unread()
    }

    private mutating func hex4() throws(Unread) -> UInt32 {
        guard index + 4 <= bytes.count else { throw Unread() }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            index += 1
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw Unread()
            }
            value = value << 4 | UInt32(digit)
        }
        return value
    }

    /// A string that is the raw value of a case of `T` (an enum the API takes by name).
    mutating func named<T: RawRepresentable>(_ type: T.Type) throws(Unread) -> T where T.RawValue == String {
        guard let value = T(rawValue: try string()) else { throw Unread() }
        return value
    }

    /// A number without an exponent and of at most 20 characters (so it cannot overflow or
    /// underflow, where decoders differ), as a Double.
    mutating func number() throws(Unread) -> Double {
        skipSpace()
        let start = index
        _ = take(byte: UInt8(ascii: "-"))
        guard index < bytes.count else { throw Unread() }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
        } else {
            guard digits() > 0 else { throw Unread() }
        }
        if take(byte: UInt8(ascii: ".")) {
            guard digits() > 0 else { throw Unread() }
        }
        // An exponent, or a digit after a leading zero: left to the reference decoder.
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") || isDigit(bytes[index]) {
            throw Unread()
        }
        guard index - start <= 20, let value = Double(String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)) else {
            throw Unread()
        }
        return value
    }

    /// `true` or `false`.
    mutating func bool() throws(Unread) -> Bool {
        if literal("true") { return true }
        if literal("false") { return false }
        throw Unread()
    }

    /// Whether the next value is `null` (read if so).
    mutating func null() -> Bool { literal("null") }

    /// Reads any value, checking its syntax (strings are scanned, not unescaped); for a value
    /// that is decoded on its own afterwards (`bytes(from:)`).
    mutating func skipValue(depth: Int = 0) throws(Unread) {
        guard depth < Self.depthLimit else { throw Unread() }
        skipSpace()
        guard index < bytes.count else { throw Unread() }
        switch bytes[index] {
        case UInt8(ascii: "{"):
            try beginObject()
            var first = true
            while try nextKeySkippingEscapes(&first) { try skipValue(depth: depth + 1) }
        case UInt8(ascii: "["):
            try beginArray()
            var first = true
            while try nextElement(&first) { try skipValue(depth: depth + 1) }
        case UInt8(ascii: "\""):
            try skipString()
        case UInt8(ascii: "t"), UInt8(ascii: "f"):
            _ = try bool()
        case UInt8(ascii: "n"):
            guard null() else { throw Unread() }
        default:
            try skipNumber()
        }
    }

    /// Any JSON number, exponent included (it is decoded elsewhere).
    private mutating func skipNumber() throws(Unread) {
        _ = take(byte: UInt8(ascii: "-"))
        guard index < bytes.count else { throw Unread() }
        if !take(byte: UInt8(ascii: "0")) {
            guard digits() > 0 else { throw Unread() }
        }
        if take(byte: UInt8(ascii: ".")) {
            guard digits() > 0 else { throw Unread() }
        }
        if take(byte: UInt8(ascii: "e")) || take(byte: UInt8(ascii: "E")) {
            if !take(byte: UInt8(ascii: "+")) { _ = take(byte: UInt8(ascii: "-")) }
            guard digits() > 0 else { throw Unread() }
        }
    }

    /// Like `nextKey`, for keys of any content (in a value that is only skipped).
    private mutating func nextKeySkippingEscapes(_ first: inout Bool) throws(Unread) -> Bool {
        guard try another(&first, before: UInt8(ascii: "}")) else { return false }
        try skipString()
        try expect(UInt8(ascii: ":"))
        return true
    }

    private mutating func skipString() throws(Unread) {
        try expect(UInt8(ascii: "\""))
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            if byte == UInt8(ascii: "\"") { return }
            if byte == UInt8(ascii: "\\") { index += 1 }
            else if byte < 0x20 { throw Unread() }
        }
        throw Unread()
    }

    // MARK: bytes

    /// Whether a member or element follows (its `,` read unless it is the first), or the
    /// object or array ends (`closing` read).
    private mutating func another(_ first: inout Bool, before closing: UInt8) throws(Unread) -> Bool {
        if take(closing) { return false }
        if !first { try expect(UInt8(ascii: ",")) }
        first = false
        return true
    }

    /// Whether `key` (from `nextKey`) is `name`.
    static func key(_ key: UnsafeRawBufferPointer, is name: StaticString) -> Bool {
        key.count == name.utf8CodeUnitCount && key.elementsEqual(UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
    }

    private mutating func skipSpace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    /// After whitespace: reads `byte` if it is next.
    private mutating func take(_ byte: UInt8) -> Bool {
        skipSpace()
        return take(byte: byte)
    }

    /// Reads `byte` if it is next (no whitespace skipped: inside a number).
    private mutating func take(byte: UInt8) -> Bool {
        guard index < bytes.count, bytes[index] == byte else { return false }
        index += 1
        return true
    }

    private mutating func expect(_ byte: UInt8) throws(Unread) {
        guard take(byte) else { throw Unread() }
    }

    private func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    /// Reads a run of digits; how many.
    private mutating func digits() -> Int {
        let start = index
        while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        return index - start
    }

    /// After whitespace: reads `word` if it is next (what follows is checked by the next read).
    private mutating func literal(_ word: StaticString) -> Bool {
        skipSpace()
        let count = word.utf8CodeUnitCount
        guard index + count <= bytes.count,
              UnsafeRawBufferPointer(rebasing: bytes[index..<(index + count)]).elementsEqual(UnsafeBufferPointer(start: word.utf8Start, count: count)) else {
            return false
        }
        index += count
        return true
    }
}
