internal import FoundationEssentials
internal import HTTPServer
internal import TransferModel

/// The bodies of task creation, the requests a client sends by the thousand: read straight from
/// their bytes (`TaskCreate.read`, `TaskBatchCreate.read`) when they have the common shape, and
/// otherwise decoded as every other body (`decode`), which gives every error as before.
extension APIRequest {
    /// The body of `POST /v1/sessions/{sid}/tasks`.
    func decodeTaskCreate() throws -> TaskCreate {
        if bodyIsJSON, let task = TaskCreate.read(json: http.body) { return task }
        return try decode(TaskCreate.self)
    }

    /// The body of `POST /v1/sessions/{sid}/tasks:batch`.
    func decodeTaskBatch() throws -> TaskBatchCreate {
        if bodyIsJSON, let batch = TaskBatchCreate.read(json: http.body) { return batch }
        return try decode(TaskBatchCreate.self)
    }
}
