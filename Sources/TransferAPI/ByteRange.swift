/// One `Range: bytes=...` request against a representation of `size` bytes (RFC 9110 14.1.2).
/// Only single ranges are served; a multi-range request is answered whole (allowed by the RFC).
enum ByteRange: Equatable {
    case whole
    /// Inclusive offsets.
    case part(first: Int, last: Int)
    case unsatisfiable

    static func parse(_ header: String?, size: Int) -> ByteRange {
        guard let header, header.hasPrefix("bytes="), !header.contains(",") else { return .whole }
        let spec = header.dropFirst("bytes=".count).filter { $0 != " " }
        guard let dash = spec.firstIndex(of: "-") else { return .whole }
        let firstText = spec[..<dash], lastText = spec[spec.index(after: dash)...]
        if firstText.isEmpty {
            // bytes=-N: the last N bytes.
            guard let suffix = position(lastText) else { return .whole }
            return size == 0 || suffix == 0 ? .unsatisfiable : .part(first: max(0, size - suffix), last: size - 1)
        }
        guard let first = position(firstText) else { return .whole }
        guard first < size else { return .unsatisfiable }
        if lastText.isEmpty { return .part(first: first, last: size - 1) }
        guard let last = position(lastText), last >= first else { return .whole }
        return .part(first: first, last: min(last, size - 1))
    }

    /// 1*DIGIT, saturating; nil for anything else (a sign, a letter, nothing), so a malformed
    /// header is ignored rather than answered with 416.
    private static func position(_ text: Substring) -> Int? {
        guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else { return nil }
        return Int(text) ?? .max
    }
}
