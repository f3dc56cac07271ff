public import Foundation

/// gzip(1) in a child process: compressed bodies for origins that send `Content-Encoding: gzip`
/// (the daemon decodes them; the tests need real encoder output, not the daemon's own code).
public enum GzipTool {
    /// gzip -6 of `data`.
    public static func compress(_ data: Data) -> Data {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("transferd-gzip-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: file) }
        try? data.write(to: file)
        return run("gzip -c -6 < '\(file.path)'")
    }

    /// gzip -6 of `count` zero bytes (about 1,030 times smaller), never held uncompressed.
    public static func zeros(_ count: Int) -> Data {
        run("head -c \(count) /dev/zero | gzip -c -6")
    }

    private static func run(_ command: String) -> Data {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", command]
        let pipe = Pipe()
        process.standardOutput = pipe
        try? process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return output
    }
}
