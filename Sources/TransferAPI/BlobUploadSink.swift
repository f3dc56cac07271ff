internal import HTTPServer
internal import TransferStore

/// Streams the body of `POST /v1/blobs` into a `BlobWriter`, so a blob of any size costs no
/// more memory than one chunk. Made by `APIHandler.bodySink(for:)` for one request and used
/// only by the HTTP server (one thread at a time, see `HTTPBodySink`).
///
/// The temporary file is created with the first byte (or at the end, for an empty body), so a
/// request refused from its head leaves nothing. `finish()` hands the still-open writer to the
/// route, which commits it off the server's thread (the commit fsyncs).
final class BlobUploadSink: HTTPBodySink {
    let maxBodySize: Int
    private let blobs: BlobStore
    private let owner: String?
    /// Set for a client whose token was refused, or whose blob's announced size passes its disk
    /// quota: nothing is written and finish() answers this. Preflight refuses a bad token before
    /// any byte; this keeps a refusal from ever becoming an anonymous blob should that change.
    private let refusal: APIError?
    private var writer: BlobWriter?
    /// Why writing stopped; answered by finish().
    private var failure: BlobStoreError?

    init(blobs: BlobStore, owner: String?, maxBodySize: Int, refusal: APIError? = nil) {
        self.blobs = blobs
        self.owner = owner
        self.maxBodySize = maxBodySize
        self.refusal = refusal
    }

    func write(_ bytes: RawSpan) -> Bool {
        guard refusal == nil else { return false }
        do throws(BlobStoreError) {
            try currentWriter().write(bytes)
            return true
        } catch {
            failure = error
            abandon()
            return false
        }
    }

    func finish() -> Result<any Sendable, HTTPBodyRefusal> {
        if let refusal { return .failure(HTTPBodyRefusal(refusal.response)) }
        do throws(BlobStoreError) {
            if let failure { throw failure }
            let writer = try currentWriter()
            self.writer = nil
            return .success(writer)
        } catch {
            abandon()
            return .failure(HTTPBodyRefusal(BlobRoutes.apiError(error).response))
        }
    }

    func abandon() {
        writer?.discard()
        writer = nil
    }

    /// The writer, created on first use.
    private func currentWriter() throws(BlobStoreError) -> BlobWriter {
        if let writer { return writer }
        let writer = try blobs.makeWriter(owner: owner)
        self.writer = writer
        return writer
    }
}
