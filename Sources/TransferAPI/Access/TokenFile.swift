internal import FoundationEssentials
internal import Glibc

/// Reads `--token-file`/`TRANSFERD_TOKENS_FILE`. A file other local users can read would hand
/// them every secret, so a world-readable one is refused; a group-readable one is allowed with
/// a warning (a secret mounted for one group of services).
public enum TokenFile {
    /// The file's text, and a warning to log, or the reason it cannot be used.
    public static func read(_ path: String) throws(TokenConfigurationError) -> (text: String, warning: String?) {
        var status = stat()
        guard stat(path, &status) == 0, let data = FileManager.default.contents(atPath: path) else {
            throw TokenConfigurationError("cannot read the token file \(path): \(String(cString: strerror(errno)))")
        }
        let permissions = Int(status.st_mode) & 0o777
        if permissions & 0o004 != 0 {
            throw TokenConfigurationError("the token file \(path) is readable by every user (mode \(String(permissions, radix: 8))); chmod 600 it")
        }
        let warning = permissions & 0o040 != 0 ? "the token file \(path) is readable by its group (mode \(String(permissions, radix: 8)))" : nil
        return (String(decoding: data, as: UTF8.self), warning)
    }
}
