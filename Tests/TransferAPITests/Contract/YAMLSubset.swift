/// A YAML value as our openapi.yaml writes it: block mappings and sequences by indentation,
/// everything else a scalar kept as text (block scalars `|`, flow values `[a, b]` and `{...}`
/// are not parsed further: the contract tests read keys, `$ref`s and lists only). No YAML library
/// is a dependency of the package, and the document keeps to this subset.
indirect enum YAMLSubset: Equatable {
    case map([(key: String, value: YAMLSubset)])
    case list([YAMLSubset])
    case scalar(String)

    static func == (a: YAMLSubset, b: YAMLSubset) -> Bool {
        switch (a, b) {
        case (.map(let x), .map(let y)): x.count == y.count && zip(x, y).allSatisfy { $0.key == $1.key && $0.value == $1.value }
        case (.list(let x), .list(let y)): x == y
        case (.scalar(let x), .scalar(let y)): x == y
        default: false
        }
    }

    subscript(key: String) -> YAMLSubset? {
        guard case .map(let entries) = self else { return nil }
        return entries.first { $0.key == key }?.value
    }

    var entries: [(key: String, value: YAMLSubset)] {
        if case .map(let entries) = self { entries } else { [] }
    }

    var items: [YAMLSubset] {
        if case .list(let items) = self { items } else { [] }
    }

    var text: String? {
        if case .scalar(let text) = self { text } else { nil }
    }

    static func parse(_ document: String) -> YAMLSubset {
        var parser = YAMLSubsetParser(document)
        return parser.block()
    }
}

/// Reads lines by indentation. A sequence item `- key: value` opens a mapping two columns in,
/// so its line is rewritten as that mapping's first line.
private struct YAMLSubsetParser {
    private var lines: [String]
    private var index = 0

    init(_ document: String) {
        lines = document.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    }

    private static func indent(_ line: String) -> Int { line.prefix { $0 == " " }.count }

    private func isBlank(_ line: String) -> Bool {
        let trimmed = line.drop { $0 == " " }
        return trimmed.isEmpty || trimmed.hasPrefix("#")
    }

    private mutating func skipBlank() {
        while index < lines.count, isBlank(lines[index]) { index += 1 }
    }

    private func content(_ line: String) -> Substring { line.drop { $0 == " " } }

    private static func isItem(_ content: Substring) -> Bool { content == "-" || content.hasPrefix("- ") }

    /// The block that starts at the next line, at that line's indentation.
    mutating func block() -> YAMLSubset {
        skipBlank()
        guard index < lines.count else { return .scalar("") }
        let column = Self.indent(lines[index])
        return Self.isItem(content(lines[index])) ? list(at: column) : map(at: column)
    }

    private mutating func list(at column: Int) -> YAMLSubset {
        var items: [YAMLSubset] = []
        while true {
            skipBlank()
            guard index < lines.count, Self.indent(lines[index]) == column, Self.isItem(content(lines[index])) else { break }
            let rest = content(lines[index]).dropFirst(2)
            if Self.keyAndValue(rest) != nil {
                lines[index] = String(repeating: " ", count: column + 2) + rest
                items.append(map(at: column + 2))
            } else {
                index += 1
                items.append(.scalar(Self.unquoted(rest)))
                skipContinuation(deeperThan: column)
            }
        }
        return .list(items)
    }

    private mutating func map(at column: Int) -> YAMLSubset {
        var entries: [(key: String, value: YAMLSubset)] = []
        while true {
            skipBlank()
            guard index < lines.count, Self.indent(lines[index]) == column, !Self.isItem(content(lines[index])),
                  let (key, value) = Self.keyAndValue(content(lines[index])) else { break }
            index += 1
            if value.isEmpty {
                skipBlank()
                if index < lines.count, Self.indent(lines[index]) > column
                    || (Self.indent(lines[index]) == column && Self.isItem(content(lines[index]))) {
                    entries.append((key, block()))
                } else {
                    entries.append((key, .scalar("")))
                }
            } else if value.hasPrefix("|") || value.hasPrefix(">") {
                entries.append((key, .scalar(blockScalar(deeperThan: column))))
            } else {
                entries.append((key, .scalar(Self.unquoted(value))))
                skipContinuation(deeperThan: column)
            }
        }
        return .map(entries)
    }

    /// The lines of a `|` scalar, joined, without their common indentation.
    private mutating func blockScalar(deeperThan column: Int) -> String {
        var taken: [String] = []
        while index < lines.count, lines[index].allSatisfy({ $0 == " " }) || Self.indent(lines[index]) > column {
            taken.append(lines[index])
            index += 1
        }
        let margin = taken.filter { !$0.allSatisfy { $0 == " " } }.map(Self.indent).min() ?? 0
        return taken.map { String($0.dropFirst(margin)) }.joined(separator: "\n")
    }

    /// A flow value or plain scalar that goes on over more deeply indented lines.
    private mutating func skipContinuation(deeperThan column: Int) {
        while index < lines.count, isBlank(lines[index]) || Self.indent(lines[index]) > column { index += 1 }
    }

    /// `key: value`, `key:` or `'quoted key': value`; nil for a line that is not a mapping entry.
    static func keyAndValue(_ content: Substring) -> (String, Substring)? {
        if let quote = content.first, quote == "'" || quote == "\"" {
            guard let close = content.dropFirst().firstIndex(of: quote) else { return nil }
            let after = content[content.index(after: close)...]
            guard after.hasPrefix(":") else { return nil }
            return (String(content[content.index(after: content.startIndex)..<close]), after.dropFirst().drop { $0 == " " })
        }
        if content.hasPrefix("[") || content.hasPrefix("{") { return nil }
        if let separator = content.firstRange(of: ": ") {
            return (String(content[..<separator.lowerBound]), content[separator.upperBound...].drop { $0 == " " })
        }
        if content.hasSuffix(":") { return (String(content.dropLast()), "") }
        return nil
    }

    static func unquoted(_ value: Substring) -> String {
        if value.count >= 2, let first = value.first, first == value.last, first == "'" || first == "\"" {
            return String(value.dropFirst().dropLast())
        }
        return String(value)
    }
}
