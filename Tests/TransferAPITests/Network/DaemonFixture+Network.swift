import Foundation
import Testing
import TestSupport

/// Helpers of the proxy and TLS tests: a session with a configuration, a task run to its end.
extension DaemonFixture {
    /// Creates a default session with `configuration` and returns its id.
    func session(configuration: [String: Any], sourceLocation: SourceLocation = #_sourceLocation) async throws -> String {
        try #require(try await createSession(["configuration": configuration], sourceLocation: sourceLocation).string("id"), sourceLocation: sourceLocation)
    }

    /// Runs a task of `kind` ("download" or "data") for `url` in `session` and returns it completed.
    func run(_ kind: String, _ url: String, in session: String, sourceLocation: SourceLocation = #_sourceLocation) async throws -> [String: Any] {
        let id = try #require(try await createTask(in: session, ["kind": kind, "request": ["url": url]], sourceLocation: sourceLocation).int("id"), sourceLocation: sourceLocation)
        return try await waitForCompletion(id, sourceLocation: sourceLocation)
    }

    /// Downloads `url` in `session`, expects success, and returns the SHA-256 of the file.
    func downloadDigest(_ url: String, in session: String, sourceLocation: SourceLocation = #_sourceLocation) async throws -> String {
        let task = try await run("download", url, in: session, sourceLocation: sourceLocation)
        try #require(task.isNull("error"), "download of \(url) failed: \(task.object("error") ?? [:])", sourceLocation: sourceLocation)
        return try sha256(ofFile: try #require(task.string("location"), sourceLocation: sourceLocation))
    }
}

extension Dictionary where Key == String, Value == Any {
    /// The URLError name of a completed task's error ("serverCertificateUntrusted"), nil on success.
    var errorName: String? { object("error")?.string("name") }
}

/// The nginx test files and their digests.
enum TestFile {
    static func digest(_ name: String) throws -> String {
        try sha256(ofFile: try Peers.nginxDocumentRoot().appendingPathComponent(name).path)
    }

    /// The port of a peer's base URL ("http://127.0.0.1:PORT").
    static func port(of base: String) -> String { String(base.split(separator: ":").last ?? "") }
}
