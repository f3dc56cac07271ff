public import FoundationEssentials

/// The served form of a stored task record without reading it. The stored form is the served
/// form plus a few members only the store keeps, written by the same `TaskJSONWriter` in the same
/// order and spelling; the writer notes where those members are, and the store keeps that note
/// beside the record (`servedCut`). Cutting them out gives the served bytes exactly: a few
/// copies, where decoding and encoding a completed task again took about 35 µs (a page of 100
/// stored tasks, issue 18).
///
/// The note names the shape of the served form (`formId`, from its member names): a record
/// written by a version whose served form had other members is not cut but decoded, so no
/// answer ever lacks a member the API now serves.
///
/// A record leaves its null members out (`TaskJSONWriter.omitsNulls`, noted by `~` after the
/// shape): a queued task's record was half nulls, and SQLite writes records half the size at
/// about 1.5 times the rows a second (issue 18, `bench/sqlite_floor.py`). The cut form then
/// gets its nulls back from `ServedNulls`. A version that does not know the mark decodes the
/// record instead (every decoder takes a missing optional member as nil).
extension TransferTask {
    /// The top-level members of the served form, in the order `TaskJSONWriter.write` writes them.
    /// `TaskPageJSONTests` fails when the writer and this list differ.
    static let servedKeys: [String] = [
        "bandwidthLimit", "bodyStream", "cacheStatus", "checksum", "completedAt", "conflict", "createdAt",
        "currentRequest", "dataInEvents", "decision", "decisions", "description", "destination", "digest", "earliestBeginDate", "error", "id", "kind",
        "location", "mirrors", "networkServiceType", "originalRequest", "phase", "preemptions", "priority",
        "progress", "response", "responseDisposition", "resumable", "retryCount", "schedulingClass", "segments",
        "sessionId", "startedAt", "state", "version",
    ]

    /// The served form's shape: 32-bit FNV-1a of its member names (the same in every process).
    /// Short, so a note without spans fits in a String without a heap allocation.
    static let formId: String = {
        var hash: UInt32 = 0x811c_9dc5
        for byte in servedKeys.joined(separator: ",").utf8 {
            hash = (hash ^ UInt32(byte)) &* 0x0100_0193
        }
        return String(hash, radix: 16)
    }()

    /// The stored form, without its null members, and the note that cuts the served form out
    /// of it: `FORM~:START-END,...`, the byte ranges of the stored-only members.
    package func storedRecord() -> (json: Data, servedCut: String) {
        var writer = TaskJSONWriter()
        writer.omitsNulls = true
        writer.write(self, stored: true)
        let spans = writer.storedOnlySpans.map { "\($0.lowerBound)-\($0.upperBound)" }.joined(separator: ",")
        return (writer.data(), Self.formId + "~:" + spans)
    }

    /// The served JSON of `record` by its note, or nil when the note is missing, of another
    /// shape, or does not fit the record. A record without nulls (`~`) gets them back.
    package static func servedJSON(fromStored record: Data, cut: String?) -> Data? {
        guard let cut, cut.hasPrefix(formId) else { return nil }
        var rest = cut.utf8.dropFirst(formId.utf8.count)
        let withoutNulls = rest.first == UInt8(ascii: "~")
        if withoutNulls { rest = rest.dropFirst() }
        guard rest.first == UInt8(ascii: ":") else { return nil }
        var served = Data()
        served.reserveCapacity(record.count)
        var from = 0
        for span in rest.dropFirst().split(separator: UInt8(ascii: ",")) {
            let bounds = span.split(separator: UInt8(ascii: "-"))
            guard bounds.count == 2, let start = Int(Substring(bounds[0])), let end = Int(Substring(bounds[1])),
                  from <= start, start <= end, end <= record.count else { return nil }
            served.append(record[record.startIndex + from ..< record.startIndex + start])
            from = end
        }
        served.append(record[(record.startIndex + from)...])
        return withoutNulls ? ServedNulls.restore(served) : served
    }
}
