internal import FoundationEssentials
internal import TransferModel

/// Checks that an FTP server stored every byte of an upload. A server can answer 226 (transfer
/// complete) for a file it cut short: with libcurl 7.88 over TLS 1.3 pyftpdlib stored 114,688
/// of 300,001 bytes and said 226. So after the upload the control connection asks `SIZE` of the
/// file (CURLOPT_POSTQUOTE), and a size other than the bytes sent fails the task. The command
/// may fail (a server without SIZE, RFC 3659): the upload then stands unchecked, as before.
/// SFTP has no such command in libcurl and needs none: the server acknowledges each write.
struct StoredSizeCheck {
    /// "*SIZE name": the file's name in the folder libcurl changed into, "*" letting it fail.
    let command: String
    /// Whether the data transfer began (150 or 125): a 213 before it is another command's (MDTM).
    private var transferStarted = false
    private(set) var storedSize: Int?

    /// nil when the URL names no file (the upload is refused elsewhere) or the name cannot be sent.
    init?(uploadURL url: String) {
        guard let name = URL(string: url)?.lastPathComponent, !name.isEmpty, name != "/",
              !name.contains(where: { $0 == "\r" || $0 == "\n" }) else { return nil }
        command = "*SIZE " + name
    }

    /// One reply line of the server (the header callback gets them all for FTP).
    mutating func reply(_ line: String) {
        if line.hasPrefix("150") || line.hasPrefix("125") {
            transferStarted = true
            storedSize = nil
        } else if transferStarted, line.hasPrefix("213 ") {
            // "213 65536": the digits, whatever follows them.
            storedSize = Int(String(line.dropFirst(4).prefix { $0.isASCII && $0.isNumber }))
        }
    }

    /// The task's error when the server's SIZE differs from the `sent` bytes, nil otherwise.
    func failure(sent: Int) -> TaskError? {
        guard let storedSize, storedSize != sent else { return nil }
        return TaskError(.badServerResponse, "the server answered that the upload completed, but stored \(storedSize) of the \(sent) bytes sent (its SIZE reply after the upload)")
    }
}
