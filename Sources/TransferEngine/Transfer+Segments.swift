internal import TransferModel

extension TransferJob {
    /// How many connections this download may use: its task's `segments`, else its session's
    /// `maximumSegmentsPerDownload`.
    var segmentCount: Int { download == nil ? 1 : segments ?? sessionSegments }
}

extension Transfer {
    /// The final answer to a download's plain GET: when it may be fetched in ranges (a 200 with
    /// `Accept-Ranges: bytes`, a length, a validator that can prove every range is of the same
    /// version, and no content coding, whose ranges would count encoded bytes), the engine
    /// makes it a `SegmentedDownload`. Anything else stays one connection, as before.
    func offerSegments(_ head: ResponseHead) {
        guard let onSegmentOffer, segmented == nil, head.statusCode == 200, base == 0, inflater == nil, remoteScheme == nil,
              currentMethod.uppercased() == "GET", head.value("Accept-Ranges")?.lowercased() == "bytes",
              let total = expectedTotal, total > 0, resumeState()?.ifRange != nil else { return }
        onSegmentOffer(self)
    }
}
