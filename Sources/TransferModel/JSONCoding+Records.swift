public import FoundationEssentials

extension JSONCoding {
    /// The encoder of stored records: `JSONCoding.encoder`'s format, plus what a client may
    /// write but never read back (proxy passwords, `CodingUserInfoKey.includesSecrets`). Only
    /// the store uses it; an API answer must never be encoded with it.
    public static let recordEncoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.userInfo[.includesSecrets] = true
        return encoder
    }()
}
