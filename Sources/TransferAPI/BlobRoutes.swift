internal import Dispatch
internal import FoundationEssentials
internal import HTTPServer
internal import Logging
internal import TransferStore
internal import TransferService
internal import TransferModel

/// /v1/blobs: upload bodies sent ahead of their tasks. The body of `POST /v1/blobs` is streamed
/// to disk by `BlobUploadSink` (see `APIHandler.bodySink(for:)`) and arrives here as an open
/// `BlobWriter`; a request that reached the route with an in-memory body (a handler test, no
/// sink) is written here instead. A blob counts toward its token's disk quota
/// (`TenantQuotas.maxDiskBytes`): one that would pass it is refused with 507 and not kept.
enum BlobRoutes {
    static func register(_ router: inout Router, service: TransferService, maxBlobSize: Int, logger: Logger) {
        let blobs = service.blobs
        router.add("POST", "/v1/blobs") { request in
            let writer: BlobWriter
            if let streamed = request.http.streamedBody as? BlobWriter {
                writer = streamed
            } else {
                guard request.http.body.count <= maxBlobSize else { throw tooLarge(maxBlobSize) }
                writer = try blobs.makeWriter(owner: request.owner)
                do {
                    try request.http.body.withUnsafeBytes { try writer.write($0.bytes) }
                } catch {
                    writer.discard()
                    throw (error as? BlobStoreError).map(apiError) ?? error
                }
            }
            // The commit fsyncs the whole file: not on one of the server's few threads.
            return .later { respond in
                DispatchQueue.global().async {
                    do throws(BlobStoreError) {
                        let blob = try writer.commit(limit: service.blobByteLimit(owner: request.owner))
                        var response = HTTPResponse.json(blob, status: 201)
                        response.headers.add(name: "Location", value: "/v1/blobs/\(blob.id)")
                        respond(response)
                    } catch {
                        // A quota refusal is the client's, not a failure of the daemon's.
                        if case .overQuota = error {} else {
                            logger.error("blob not stored", metadata: ["blob.id": "\(writer.id)", "error": "\(error)"])
                        }
                        respond(apiError(error).response)
                    }
                }
            }
        }
        router.add("GET", "/v1/blobs/{id}") { request in
            .json(try blobs.blob(request.parameter("id"), owner: request.owner))
        }
        router.add("DELETE", "/v1/blobs/{id}") { request in
            try blobs.delete(request.parameter("id"), owner: request.owner)
            return .now(HTTPResponse(status: 204))
        }
    }

    /// The client's error for a failure to store a blob.
    static func apiError(_ error: BlobStoreError) -> APIError {
        switch error {
        case .insufficientStorage:
            return APIError(507, "insufficient_storage", "the daemon's disk is full; delete blobs or free space, then retry")
        case .overQuota(let held):
            return APIError(507, "quota_exceeded", "the blob would pass this token's disk quota (its blobs hold \(held) bytes); delete tasks or blobs, then retry")
        case .failed:
            return APIError(500, "internal_error", "the blob could not be stored")
        }
    }

    static func tooLarge(_ limit: Int) -> APIError {
        APIError(413, "payload_too_large", "The request body is larger than \(limit) bytes.")
    }
}
