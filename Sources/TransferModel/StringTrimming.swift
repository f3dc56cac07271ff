/// HTTP's optional whitespace: spaces and tabs.
@usableFromInline
package enum OptionalWhitespace {
    /// The bounds of `bytes` without the spaces and tabs at either end.
    @inlinable
    package static func trimmedBounds(_ bytes: Slice<UnsafeBufferPointer<UInt8>>) -> Range<Int> {
        var start = bytes.startIndex, end = bytes.endIndex
        while start < end, bytes[start] == 0x20 || bytes[start] == 0x09 { start += 1 }
        while end > start, bytes[end - 1] == 0x20 || bytes[end - 1] == 0x09 { end -= 1 }
        return start..<end
    }
}

/// String helpers that FoundationEssentials (our Foundation subset, chosen for binary size) lacks.
extension StringProtocol {
    /// The text without leading and trailing spaces and tabs (HTTP's optional whitespace, which
    /// is those two bytes). Scans the UTF-8 bytes: the Set of Characters the general form builds
    /// and the grapheme walk made this 4 % of the engine thread's time in parsing response heads.
    /// Inlinable, so other modules get it specialized for their string type: called unspecialized
    /// through witness tables per byte it cost the engine thread 5 % again.
    /// A String or Substring (contiguous UTF-8) is read as a buffer from both ends: walking its
    /// UTF8View index by index was 8% of the engine thread's instructions (callgrind, 16 KiB
    /// downloads), a few header lines per response.
    @inlinable
    package func trimmed() -> String {
        let trimmedContiguous = utf8.withContiguousStorageIfAvailable { bytes -> String in
            let bounds = OptionalWhitespace.trimmedBounds(bytes[...])
            if bounds == 0..<bytes.count, let whole = self as? String { return whole }
            return String(decoding: UnsafeBufferPointer(rebasing: bytes[bounds]), as: UTF8.self)
        }
        if let trimmedContiguous { return trimmedContiguous }
        let bytes = utf8
        var first: UTF8View.Index?, last: UTF8View.Index?
        for index in bytes.indices where bytes[index] != 0x20 && bytes[index] != 0x09 {
            if first == nil { first = index }
            last = index
        }
        guard let first, let last else { return "" }
        let end = bytes.index(after: last)
        if first == bytes.startIndex, end == bytes.endIndex, let whole = self as? String { return whole }
        return String(decoding: bytes[first..<end], as: UTF8.self)
    }

    /// The text without leading and trailing characters of `set`.
    package func trimmed(_ set: Set<Character>) -> String {
        guard let first = firstIndex(where: { !set.contains($0) }),
              let last = lastIndex(where: { !set.contains($0) }) else { return "" }
        return String(self[first...last])
    }

    /// Equal ignoring ASCII case (header names, tokens), without the two lowercased copies
    /// `lowercased() ==` allocates: every response head is searched several times.
    /// Inlinable, as `trimmed()`: called unspecialized from the engine it was 3% of that thread.
    /// Strings of different lengths differ at once (a String's UTF-8 count is stored).
    @inlinable
    package func equalsIgnoringASCIICase(_ other: some StringProtocol) -> Bool {
        guard utf8.count == other.utf8.count else { return false }
        var mine = utf8.makeIterator(), theirs = other.utf8.makeIterator()
        while true {
            switch (mine.next(), theirs.next()) {
            case (nil, nil): return true
            case (let a?, let b?):
                guard a == b || (a | 0x20 == b | 0x20 && (0x61...0x7a).contains(a | 0x20)) else { return false }
            default: return false
            }
        }
    }
}
