extension KeyedDecodingContainer {
    /// An optional field of a request body that a client may leave out but not send as `null`:
    /// `decodeIfPresent` takes `null` for "left out", which the contract (openapi.yaml) does not
    /// allow for a field whose type has no `null`. Throws `DecodingError.valueNotFound`, which
    /// the API answers as `400 invalid_type` naming the field.
    public func decodeOmittable<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        guard contains(key) else { return nil }
        if try decodeNil(forKey: key) {
            throw DecodingError.valueNotFound(type, DecodingError.Context(
                codingPath: codingPath + [key], debugDescription: "\(key.stringValue) is null"))
        }
        return try decode(type, forKey: key)
    }
}
