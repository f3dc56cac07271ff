internal import FoundationEssentials
internal import HTTPServer
internal import TransferModel

/// The bodies of task creation, the requests a client sends by the thousand: read straight from
/// their bytes (`TaskCreate.read`, `TaskBatchCreate.read`) when they have the common shape, and
/// otherwise decoded as every other body (`decode`), which gives every error as before.
extension APIRequest {
    /// The body of `POST /v1/sessions/{sid}/tasks`.
    func decodeTaskCreate() throws -> TaskCreate {
        if declaresJSON, let task = TaskCreate.read(json: http.body) { return task }
        return try decode(TaskCreate.self)
    }

    /// The body of `POST /v1/sessions/{sid}/tasks:batch`.
    func decodeTaskBatch() throws -> TaskBatchCreate {
        if declaresJSON, let batch = TaskBatchCreate.read(json: http.body) { return batch }
        return try decode(TaskBatchCreate.self)
    }

    /// Whether Content-Type is application/json (case and spaces aside, parameters after `;`
    /// ignored), so `decode` would take the body too. False for anything it is unsure of: then
    /// `decode` decides (and answers 415).
    private var declaresJSON: Bool {
        guard let value = http.headers["Content-Type"] else { return false }
        var type = value.utf8.prefix { $0 != UInt8(ascii: ";") }.drop { $0 == UInt8(ascii: " ") }
        while type.last == UInt8(ascii: " ") { type = type.dropLast() }
        return type.count == 16 && zip(type, "application/json".utf8).allSatisfy { byte, expected in
            byte == expected || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") && byte + 32 == expected)
        }
    }
}
