import ArgumentParser
import FoundationEssentials

extension TransferdCommand {
    /// `--file-url-roots`: comma-separated absolute folders that must exist; nil or empty
    /// leaves file: URLs off.
    static func fileURLRoots(_ text: String?) throws -> [String] {
        let roots = (text ?? "").split(separator: ",").map(String.init).filter { !$0.isEmpty }
        for root in roots {
            var isDirectory = false
            guard root.hasPrefix("/"), FileManager.default.fileExists(atPath: root, isDirectory: &isDirectory), isDirectory else {
                throw ValidationError("--file-url-roots: \(root) is not an existing absolute folder")
            }
        }
        return roots
    }
}
