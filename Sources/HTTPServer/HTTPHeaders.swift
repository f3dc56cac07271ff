/// An ordered list of HTTP header fields with case-insensitive lookup by name.
///
/// A plain value: requests own the headers the client sent, responses the headers a handler
/// sets. Order and duplicates are kept as given, so a header sent twice is seen twice.
public struct HTTPHeaders: Sendable, Sequence {
    /// The fields in the order they were added.
    private var fields: [(name: String, value: String)]

    public init(_ pairs: [(String, String)] = []) {
        fields = pairs.map { (name: $0.0, value: $0.1) }
    }

    /// The value of the first field called `name`, compared without regard to case.
    public subscript(name: String) -> String? {
        fields.first { Self.sameName($0.name, name) }?.value
    }

    /// Every value of the fields called `name`, in order.
    public func values(name: String) -> [String] {
        fields.filter { Self.sameName($0.name, name) }.map(\.value)
    }

    /// Appends a field, keeping any that already have this name.
    public mutating func add(name: String, value: String) {
        fields.append((name: name, value: value))
    }

    /// Sets the value of the first field called `name` in place and drops any later ones;
    /// appends the field when there is none.
    public mutating func replaceOrAdd(name: String, value: String) {
        guard let first = fields.firstIndex(where: { Self.sameName($0.name, name) }) else {
            add(name: name, value: value)
            return
        }
        fields[first] = (name: name, value: value)
        var index = fields.index(after: first)
        while index < fields.endIndex {
            if Self.sameName(fields[index].name, name) {
                fields.remove(at: index)
            } else {
                index = fields.index(after: index)
            }
        }
    }

    /// The number of fields, duplicates included.
    public var count: Int { fields.count }

    public func makeIterator() -> IndexingIterator<[(name: String, value: String)]> {
        fields.makeIterator()
    }

    /// Header names are ASCII tokens (RFC 9110 §5.1), so an ASCII case fold is exact.
    static func sameName(_ lhs: String, _ rhs: String) -> Bool {
        lhs.utf8.count == rhs.utf8.count
            && zip(lhs.utf8, rhs.utf8).allSatisfy { asciiLower($0) == asciiLower($1) }
    }

    private static func asciiLower(_ byte: UInt8) -> UInt8 {
        (byte >= 0x41 && byte <= 0x5A) ? byte | 0x20 : byte
    }
}

extension HTTPHeaders: ExpressibleByDictionaryLiteral {
    public init(dictionaryLiteral elements: (String, String)...) {
        self.init(elements)
    }
}
