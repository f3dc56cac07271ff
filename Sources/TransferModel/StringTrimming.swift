/// String helpers that FoundationEssentials (our Foundation subset, chosen for binary size) lacks.
extension StringProtocol {
    /// The text without leading and trailing characters of `set` (default: spaces and tabs).
    package func trimmed(_ set: Set<Character> = [" ", "\t"]) -> String {
        guard let first = firstIndex(where: { !set.contains($0) }),
              let last = lastIndex(where: { !set.contains($0) }) else { return "" }
        return String(self[first...last])
    }

    /// Equal ignoring ASCII case (header names, tokens), without the two lowercased copies
    /// `lowercased() ==` allocates: every response head is searched several times.
    package func equalsIgnoringASCIICase(_ other: some StringProtocol) -> Bool {
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
