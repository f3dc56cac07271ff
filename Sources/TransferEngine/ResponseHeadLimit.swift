internal import TransferModel

/// The bound on one response head, counted line by line as libcurl hands them over, so that an
/// oversized or endless head ends as badServerResponse, which is never retried, rather than as
/// curl's own "Too large response headers" (a receive error: networkConnectionLost, which
/// background sessions retried forever) or, for one line past curl's 100 KiB buffer, "Out of
/// memory" (`unknown`).
struct ResponseHeadLimit {
    /// Bytes of one head (status line and fields, CRLFs included). Below libcurl 7.88's total of
    /// 300 KiB, so this check is the one that fires; browsers allow about 256 KiB.
    static let maxBytes = 128 * 1024
    private var bytes = 0

    /// Counts one line; false once the head is past the bound. A status line starts a new head.
    mutating func count(_ line: String) -> Bool {
        if line.utf8.starts(with: "HTTP/".utf8) { bytes = 0 }
        bytes += line.utf8.count + 2
        return bytes <= Self.maxBytes
    }

    static var exceeded: TaskError {
        TaskError(.badServerResponse, "the server's response head is larger than \(maxBytes / 1024) KiB")
    }

    /// libcurl fails a header line longer than its buffer (100 KiB) with CURLE_OUT_OF_MEMORY before
    /// the header callback sees it: before a final response, that is a malformed head.
    static var lineTooLong: TaskError {
        TaskError(.badServerResponse, "the server's response head could not be read (a header line longer than 100 KiB, or malformed)")
    }
}
