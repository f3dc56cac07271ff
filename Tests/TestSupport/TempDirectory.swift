public import Foundation

/// A new, empty, uniquely named folder under the system's temporary folder, for one test's files
/// (its SQLite database, its downloads). The test owns it and calls ``remove()`` when done.
public struct TempDirectory: Sendable {
    /// The folder.
    public let url: URL

    /// Creates the folder, named `PREFIX-UUID`.
    public init(prefix: String = "transferd-test") throws {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("\(prefix)-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    /// The folder's path.
    public var path: String {
        url.path
    }

    /// The URL of `name` inside the folder (which need not exist yet).
    public func file(_ name: String) -> URL {
        url.appendingPathComponent(name, isDirectory: false)
    }

    /// Deletes the folder and everything in it; does nothing if it is already gone.
    public func remove() {
        try? FileManager.default.removeItem(at: url)
    }
}
