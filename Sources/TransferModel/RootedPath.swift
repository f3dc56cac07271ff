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
        guard !relative.hasPrefix("/") else { throw refuse("must be relative to the downloads root, not absolute") }
        guard !relative.hasSuffix("/") else { throw refuse("must name a file, not a folder") }
        guard !relative.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7f }) else {
            throw refuse("must not contain control characters")
        }
        let components = relative.split(separator: "/", omittingEmptySubsequences: true)
        guard !components.contains(where: { $0 == ".." || $0 == "." }) else { throw refuse("must not contain . or .. components") }
        let path = root + "/" + components.joined(separator: "/")
        guard folders.isInside(FileSystem.parent(of: path), root: root) else {
            throw refuse("leads outside the downloads root through a symbolic link")
        }
        return path
    }
}
