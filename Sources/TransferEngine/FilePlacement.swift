internal import TransferModel

/// A download libcurl finished whose file still has to be verified and put in place
/// (`DownloadFile.finish`: the digest's last block, close, the folder check, the rename).
///
/// Why it is handed on: done on the engine thread, that was a sixth of its time per 16 KiB
/// download, and every running transfer waited for it. The engine detaches the transfer, so
/// the file is no longer touched there, and reports this instead of the completion;
/// `UpdateRelay` runs it on its own thread, outside the service's lock, in the order it was
/// reported (after the transfer's metrics, before anything reported later), and delivers the
/// completion it ends in.
/// `@unchecked Sendable`: ownership of the file passes from the engine thread to the one that
/// runs `complete()`, once; nothing else holds it.
package final class FilePlacement: @unchecked Sendable {
    private let file: DownloadFile
    private let response: ResponseInfo

    init(file: DownloadFile, response: ResponseInfo) {
        self.file = file
        self.response = response
    }

    /// Verifies and places the file; the completion to report.
    func complete() -> TransferOutcome {
        do {
            return try .finished(file, response: response)
        } catch {
            return .failure(error)
        }
    }
}

/// How a transfer that libcurl reported done ends.
enum TransferEnding {
    /// Known now (a failure, a data task's body, an interrupted download).
    case outcome(TransferOutcome)
    /// A download whose file is placed elsewhere (`FilePlacement`).
    case place(FilePlacement)
}
