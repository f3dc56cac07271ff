internal import TransferModel

/// The names a download with conflict policy `rename` tries, in order: the destination, then
/// `name (1).ext`, `name (2).ext`, ... up to `limit` (aria2's auto-file-renaming, which also
/// stops at 9999). The number goes before the last extension of the file name; a name whose
/// only dot leads it (`.profile`) has no extension.
struct ConflictNames: Sequence {
    static let limit = 9999
    let destination: String

    init(_ destination: String) { self.destination = destination }

    func makeIterator() -> AnyIterator<String> {
        let folder = FileSystem.parent(of: destination)
        let name = destination.split(separator: "/").last.map(String.init) ?? destination
        let dot = name.lastIndex(of: "."), hasExtension = dot.map { $0 != name.startIndex } ?? false
        let stem = hasExtension ? String(name[..<dot!]) : name
        let suffix = hasExtension ? String(name[dot!...]) : ""
        var next = 0
        return AnyIterator {
            guard next <= Self.limit else { return nil }
            defer { next += 1 }
            return next == 0 ? destination : folder + "/" + stem + " (\(next))" + suffix
        }
    }
}
