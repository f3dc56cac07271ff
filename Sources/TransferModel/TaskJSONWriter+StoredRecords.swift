public import FoundationEssentials

/// The served form of a stored task record without decoding it. The stored form is the served
/// form plus a few members only the store keeps (`storedOnlyKeys`), written by the same
/// `TaskJSONWriter` in the same order and spelling, so dropping those members gives the served
/// bytes exactly. A record written by another version (other members) is not cut: the caller
/// decodes it. Why: a completed task read from the store for a page of 100 took about 35 µs
/// through JSONDecoder and JSONEncoder; the cut takes a pass over its bytes (issue 18).
extension TransferTask {
    /// The top-level members of the served form, in the order `TaskJSONWriter.write` writes them.
    /// `TaskJSONStoredRecordTests` fails when the writer and this list differ.
    static let servedKeys: [String] = [
        "bandwidthLimit", "bodyStream", "cacheStatus", "checksum", "completedAt", "conflict", "createdAt",
        "currentRequest", "description", "destination", "digest", "earliestBeginDate", "error", "id", "kind",
        "location", "mirrors", "networkServiceType", "originalRequest", "phase", "preemptions", "priority",
        "progress", "response", "responseDisposition", "resumable", "retryCount", "schedulingClass", "segments",
        "sessionId", "startedAt", "state", "version",
    ]

    /// The members the stored form adds.
    static let storedOnlyKeys: Set<String> = ["owner", "resume", "sealedLogin", "streamedBody"]

    private static let servedKeyBytes: [[UInt8]] = servedKeys.map { Array($0.utf8) }
    private static let storedOnlyKeyBytes: [[UInt8]] = storedOnlyKeys.map { Array($0.utf8) }

    /// The served JSON of `record` (a stored form), or nil when it is not this writer's shape.
    package static func servedJSON(fromStored record: Data) -> Data? {
        record.withUnsafeBytes { raw -> Data? in
            guard let base = raw.baseAddress else { return nil }
            var reader = JSONByteReader(raw)
            var out = [UInt8]()
            out.reserveCapacity(raw.count)
            out.append(UInt8(ascii: "{"))
            var served = 0
            do throws(JSONByteReader.Unread) {
                try reader.beginObject()
                var first = true
                while let key = try reader.nextKey(&first) {
                    // The member's text: from its key's opening quote to the end of its value.
                    let start = key.baseAddress! - base - 1
                    try reader.skipValue()
                    if storedOnlyKeyBytes.contains(where: { $0.elementsEqual(key) }) { continue }
                    guard served < servedKeyBytes.count, servedKeyBytes[served].elementsEqual(key) else { return nil }
                    if served > 0 { out.append(UInt8(ascii: ",")) }
                    out.append(contentsOf: UnsafeRawBufferPointer(rebasing: raw[start..<reader.index]))
                    served += 1
                }
                try reader.end()
            } catch {
                return nil
            }
            guard served == servedKeyBytes.count else { return nil }
            out.append(UInt8(ascii: "}"))
            return Data(out)
        }
    }
}
