internal import TransferModel

/// How a transfer ends: an outcome, or a downloaded file still to be checked and put in place.
enum TransferConclusion {
    case ended(TransferOutcome)
    case toPlace(FilePlacing)
}

/// A whole download's file and its response, handed from the engine thread to whoever places
/// it (`EngineLoop`'s placing queue): the digest check and the move into place are file system
/// work (a realpath of the destination's folder, link, unlink, sometimes a read-back), about a
/// sixth of the engine thread's time per 16 KiB download, and none of it needs libcurl.
///
/// Unchecked Sendable: the file is handed over, never shared. The engine detaches the transfer
/// (its handle leaves the multi handle, the transfer leaves every table) before it passes this
/// on, and nothing on the engine thread touches the file after that.
struct FilePlacing: @unchecked Sendable {
    let file: DownloadFile
    let response: ResponseInfo

    /// Checks the file and moves it into place; the task's outcome.
    func outcome() -> TransferOutcome {
        do {
            return try .finished(file, response: response)
        } catch {
            return .failure(error)
        }
    }
}
