/// String helpers that FoundationEssentials (our Foundation subset, chosen for binary size) lacks.
extension StringProtocol {
    /// The text without leading and trailing characters of `set` (default: spaces and tabs).
    package func trimmed(_ set: Set<Character> = [" ", "\t"]) -> String {
        guard let first = firstIndex(where: { !set.contains($0) }),
              let last = lastIndex(where: { !set.contains($0) }) else { return "" }
        return String(self[first...last])
    }
}
