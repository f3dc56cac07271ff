internal import TransferModel

/// The check a 206 answer to a ranged request passes before a byte of it is written: it must be
/// the rest of the very representation the partial file holds, or appending it would splice two
/// versions into one file that is then reported as a success (issue 15).
///
/// A value with no I/O, tested on its own. `Transfer.continueResumed` applies its verdict: on a
/// mismatch the partial file is discarded and the download starts over with a plain GET.
enum RangedAnswer: Equatable {
    /// The bytes continue the partial file at the offset asked for; `total` is the whole size.
    case continues(total: Int?)
    /// The answer cannot be appended; the reason, in words, for the log and the event.
    case mismatch(String)

    /// - Parameters:
    ///   - contentRange, contentLength, etag, lastModified: the 206's fields.
    ///   - offset: where the request's `Range: bytes=OFFSET-` started (the partial file's size).
    ///   - last: the last byte asked for (`Range: bytes=OFFSET-LAST`, a segment); nil: to the end.
    ///   - resume: what the partial file came from: the validators If-Range sent, the known size.
    static func check(contentRange: String?, contentLength: String? = nil, etag: String?, lastModified: String?, offset: Int, last asked: Int? = nil,
                      resume: ResumeState?) -> RangedAnswer {
        guard let range = ContentRange(contentRange), let last = range.last else {
            return .mismatch("the 206 has no usable Content-Range (\(contentRange ?? "none"))")
        }
        // libcurl reads as many bytes as Content-Length says: a body shorter than its range
        // would leave the file short, a longer one would carry bytes of something else.
        if let contentLength, let length = Int(contentLength.filter { !$0.isWhitespace }), length != last - range.first + 1 {
            return .mismatch("the 206 has a Content-Length of \(length) for the \(last - range.first + 1) bytes of its Content-Range")
        }
        // An earlier start would rewrite bytes we hold from what may be another version; a
        // later one leaves a hole. Only the offset asked for continues the file.
        guard range.first == offset else {
            return .mismatch("the 206 starts at byte \(range.first), not at \(offset) as asked")
        }
        if let asked {
            // A segment's answer must be exactly its range: a longer one would overwrite the next part.
            guard last == asked else { return .mismatch("the 206 ends at byte \(last), not at \(asked) as asked") }
        } else if let total = range.total, last != total - 1 {
            return .mismatch("the 206 ends at byte \(last) of \(total), not at the end as asked")
        }
        if let known = resume?.expectedLength, let total = range.total, known != total {
            return .mismatch("the resource is \(total) bytes now, \(known) before")
        }
        if let reason = validatorMismatch(etag: etag, lastModified: lastModified, resume: resume) {
            return .mismatch(reason)
        }
        return .continues(total: range.total ?? resume?.expectedLength)
    }

    /// Compares the 206's validator with the one If-Range sent. A server must send the same
    /// ETag (or Last-Modified) with a 206 as with a 200 (RFC 9110 15.3.7); one that sends none
    /// cannot prove the bytes are of the same version, so they are not appended.
    private static func validatorMismatch(etag: String?, lastModified: String?, resume: ResumeState?) -> String? {
        guard let sent = resume?.ifRange else { return "no validator was sent with the range request" }
        if let strong = resume?.etag, strong == sent {
            guard let etag else { return "the 206 carries no ETag to compare with \(sent)" }
            // Strong comparison (RFC 9110 8.8.3.2): a weak tag never matches.
            return etag == sent && !etag.hasPrefix("W/") ? nil : "the ETag changed from \(sent) to \(etag)"
        }
        // A weak ETag cannot prove two ranges are the same bytes, but one that changed proves
        // they are not, even when Last-Modified (what If-Range sent) stayed the same.
        if let known = resume?.etag, let etag, etag != known { return "the ETag changed from \(known) to \(etag)" }
        guard let lastModified else { return "the 206 carries no Last-Modified to compare with \(sent)" }
        return lastModified == sent ? nil : "Last-Modified changed from \(sent) to \(lastModified)"
    }
}
