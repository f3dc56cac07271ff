internal import FoundationEssentials
internal import Curl
internal import Zlib
internal import TransferModel

/// Content codings: transferd asks for gzip and deflate and decodes them itself (`Inflater`)
/// instead of letting libcurl do it, because libcurl 7.88 ends a gzip body cut short at its
/// Content-Length as a success with a truncated file. br and zstd, which libcurl could decode
/// but not tell complete, are not asked for; a response in a coding the client asked for
/// itself (its own Accept-Encoding) is handed back as sent, with its Content-Encoding.
extension Transfer {
    static let acceptedEncodings = "gzip, deflate"

    /// Sets up the decoder for the final response's coding, if transferd decodes it.
    func startDecoding(_ head: ResponseHead) {
        inflater = nil
        guard let value = head.value("Content-Encoding"), let coding = Inflater.Coding(contentEncoding: value) else { return }
        do throws(Inflater.Failure) {
            inflater = try Inflater(coding)
        } catch {
            failure = TaskError(.cannotDecodeContentData, "cannot set up decoding of the \(value) body")
        }
    }

    /// Decodes a chunk as it arrives and keeps what it decodes (`take`). False fails the transfer.
    func decode(_ bytes: RawSpan) -> Bool {
        guard let inflater else { return take(bytes) }
        do throws(Inflater.Failure) {
            return try bytes.withUnsafeBytes { raw throws(Inflater.Failure) in
                try inflater.inflate(raw) { decoded in take(decoded.bytes) }
            }
        } catch {
            switch error {
            case .corrupt(let reason): failure = TaskError(.cannotDecodeContentData, "the response body is not valid for its Content-Encoding: \(reason)")
            case .resources: failure = TaskError(.cannotDecodeContentData, "the response body could not be decoded (out of memory)")
            }
            return false
        }
    }

    /// The failure of a coded body that ended before its coding did: the server cut it short
    /// (or lied in its Content-Length), so the decoded bytes are not the whole resource.
    func decodingEndedEarly() -> TaskError? {
        guard let inflater, inflater.consumed > 0, !inflater.isFinished else { return nil }
        return TaskError(.cannotDecodeContentData, "the response body ended before the end of its Content-Encoding: it was cut short after \(inflater.consumed) bytes")
    }
}
