/// A client's relative path under one of the daemon's roots (a download's `destination`, a
/// `file` body under the uploads root). Anything that could leave the root (absolute paths,
/// "..", symlinks pointing out) is refused with 400 and `code`.
package enum RootedPath {
    /// The folders one request's paths were checked against: a batch's destinations in one
    /// folder resolve it once, not once each (a mkdir, a stat, opens and a readlink per task
    /// were a quarter of a small-file batch's creation time).
    package struct CheckedFolders {
        private var inside: [String: Bool] = [:]
        private var made: Set<String> = []

        package init() {}

        /// Makes `folder` (and its parents) unless this request made it already.
        package mutating func make(_ folder: String) throws {
            guard !made.contains(folder) else { return }
            try FileSystem.makeDirectories(folder)
            made.insert(folder)
        }

        mutating func isInside(_ folder: String, root: String) -> Bool {
            let key = root + "\u{0}" + folder
            if let known = inside[key] { return known }
            let answer = FileSystem.isInside(folder, root: root)
            inside[key] = answer
            return answer
        }
    }

    /// The absolute path of `relative` under `root`; `code` names the refusal (400).
    package static func resolve(_ relative: String, root: String, field: String, code: String) throws -> String {
        var folders = CheckedFolders()
        return try resolve(relative, root: root, field: field, code: code, checked: &folders)
    }

    /// As `resolve`, with the folders of the request's earlier paths remembered in `folders`.
    package static func resolve(_ relative: String, root: String, field: String, code: String, checked folders: inout CheckedFolders) throws -> String {
        func refuse(_ message: String) -> InputError {
            InputError.refused(field: field, code: code, message: "\(field) \(message)")
        }
        guard !relative.isEmpty, relative.utf8.count <= 1024 else { throw refuse("must be a relative path of 1 to 1024 bytes") }
        guard relative.utf8.first != UInt8(ascii: "/") else { throw refuse("must be relative to the downloads root, not absolute") }
        guard relative.utf8.last != UInt8(ascii: "/") else { throw refuse("must name a file, not a folder") }
        let shape = PathShape(relative)
        guard !shape.hasControlCharacters else { throw refuse("must not contain control characters") }
        guard !shape.hasDotComponents else { throw refuse("must not contain . or .. components") }
        // Empty components ("a//b") are dropped; a path without any is used as it is. Split on
        // the byte, as the file system does (a "/" inside a grapheme cluster still separates).
        let path = shape.hasEmptyComponents
            ? root + "/" + relative.utf8.split(separator: UInt8(ascii: "/")).map { String(Substring($0)) }.joined(separator: "/")
            : root + "/" + relative
        guard folders.isInside(FileSystem.parent(of: path), root: root) else {
            throw refuse("leads outside the downloads root through a symbolic link")
        }
        return path
    }
}

/// What one pass over a relative path's bytes finds: every destination of a batch is checked, and
/// splitting it into Substrings, comparing each and joining them again was 10% of a batch
/// download task's creation (callgrind). A control character is one byte below 0x20 or 0x7f
/// in UTF-8 (a multi-byte sequence has only bytes from 0x80), so bytes tell them as scalars do.
/// Components are what the file system takes them to be: split on the "/" byte. (The split
/// into Characters it replaces kept a "/" that a grapheme cluster took in, as in "\u{600}/..",
/// inside one component, so such a ".." went unseen; it could only cancel the component before
/// it, never leave the root, but the path named another file than it seemed to.)
private struct PathShape {
    private(set) var hasControlCharacters = false
    private(set) var hasDotComponents = false
    private(set) var hasEmptyComponents = false

    init(_ relative: String) {
        var text = relative
        text.withUTF8 { bytes in
            var componentStart = 0
            for index in 0...bytes.count {
                let byte = index < bytes.count ? bytes[index] : UInt8(ascii: "/")  // the end closes the last component
                if byte < 0x20 || byte == 0x7f { hasControlCharacters = true }
                guard byte == UInt8(ascii: "/") else { continue }
                let component = UnsafeBufferPointer(rebasing: bytes[componentStart..<index])
                if component.isEmpty {
                    hasEmptyComponents = true
                } else if component.count <= 2, component.allSatisfy({ $0 == UInt8(ascii: ".") }) {
                    hasDotComponents = true
                }
                componentStart = index + 1
            }
        }
    }
}
