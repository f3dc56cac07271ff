public import FoundationEssentials
internal import Glibc
internal import Synchronization
public import TransferModel
internal import TransferEngine

/// Request bodies the client streams (`{"stream": true}`, URLSession's
/// uploadTask(withStreamedRequest:)): each `body-chunks` request is appended to the task's spool
/// file `<data>/streams/<id>.body`, then the engine is told, so a transfer never waits on the
/// client while holding anything but its paused handle; `body-end` closes the body.
extension TransferService {
    /// Appends one chunk; returns the task after it. One chunk at a time per task, in order.
    public func appendBodyChunk(task id: Int, _ chunk: Data, owner: String?) throws -> TransferTask {
        if let stored = try storedIfLeft(id, owner: owner) { _ = try Self.openBodyStream(of: stored) }  // it refuses: completed
        let offset = try state.withLock { s throws -> Int in
            let stream = try openBodyStream(s, id, owner)
            guard !s.appendingChunks.contains(id) else {
                throw ServiceError.conflict(code: "chunk_in_progress", message: "another chunk of task \(id) is being written; send chunks one after another")
            }
            s.appendingChunks.insert(id)
            return stream.bytesReceived
        }
        // The write happens outside the service lock (it may be megabytes); the flag above
        // keeps a second chunk of the same task out meanwhile.
        let written = Self.write(chunk, to: bodySpoolPath(of: id), at: offset)
        let (task, deliveries) = state.withLock { s -> (TransferTask?, Deliveries) in
            s.appendingChunks.remove(id)
            var deliveries = Deliveries()
            guard written, let entry = s.tasks[id], entry.task.state != .completed else {
                // Completed (cancelled) while this chunk was written: its spool is not needed.
                if s.tasks[id]?.task.state == .completed { unlink(bodySpoolPath(of: id)) }
                return (s.tasks[id]?.task, deliveries)
            }
            s.tasks[id]?.task.bodyStream?.bytesReceived = offset + chunk.count
            grew(&s, task: id, &deliveries)
            return (s.tasks[id]?.task, deliveries)
        }
        guard written else { throw ServiceError.storage("the chunk could not be written: \(FileSystem.lastError)") }
        try commit(delivering: deliveries)
        guard let task else { throw ServiceError.notFound("no task \(id)") }
        return task
    }

    /// Ends the body: once the engine has sent every chunk, the request is complete.
    public func endBody(task id: Int, owner: String?) throws -> TransferTask {
        if let stored = try storedIfLeft(id, owner: owner) { _ = try Self.openBodyStream(of: stored) }  // it refuses: completed
        let (task, deliveries) = try state.withLock { s throws -> (TransferTask, Deliveries) in
            _ = try openBodyStream(s, id, owner)
            guard !s.appendingChunks.contains(id) else {
                throw ServiceError.conflict(code: "chunk_in_progress", message: "a chunk of task \(id) is still being written; end the body after it")
            }
            s.tasks[id]?.task.bodyStream?.ended = true
            var deliveries = Deliveries()
            grew(&s, task: id, &deliveries)
            return (s.tasks[id]!.task, deliveries)
        }
        try commit(delivering: deliveries)
        return task
    }

    /// The body stream of a task that still takes chunks, or the reason it does not.
    private func openBodyStream(_ s: ServiceState, _ id: Int, _ owner: String?) throws -> BodyStreamState {
        guard s.accepting else { throw ServiceError.shuttingDown }
        return try Self.openBodyStream(of: visibleTask(s, id, owner).task)
    }

    private static func openBodyStream(of task: TransferTask) throws -> BodyStreamState {
        let id = task.id
        guard let stream = task.bodyStream else {
            throw ServiceError.conflict(code: "not_a_body_stream", message: "task \(id) was not created with a {\"stream\": true} body")
        }
        guard task.state != .completed else {
            throw ServiceError.conflict(code: "task_completed", message: "task \(id) has completed")
        }
        guard !stream.ended else {
            throw ServiceError.conflict(code: "body_ended", message: "the body of task \(id) has ended")
        }
        return stream
    }

    /// Records the stream's new length and tells a running transfer.
    private func grew(_ s: inout ServiceState, task id: Int, _ deliveries: inout Deliveries) {
        guard let entry = s.tasks[id], let stream = entry.task.bodyStream else { return }
        if stream.ended { s.tasks[id]?.task.progress.bytesExpectedToSend = stream.bytesReceived }
        changed(&s, task: id, persist: true, &deliveries)
        if entry.inEngine {
            engine.submit(.bodyAvailable(taskId: id, available: stream.bytesReceived, ended: stream.ended))
        }
    }

    /// What the engine starts a client-streamed body from.
    func bodyStreamSnapshot(of task: TransferTask) -> BodyStreamSnapshot? {
        task.bodyStream.map { BodyStreamSnapshot(path: bodySpoolPath(of: task.id), available: $0.bytesReceived, ended: $0.ended) }
    }

    func bodySpoolPath(of id: Int) -> String { configuration.dataDirectory + "/streams/\(id).body" }

    /// Writes `data` at `offset` (what was recorded before): bytes a crash left past the record
    /// are overwritten, never sent.
    private static func write(_ data: Data, to path: String, at offset: Int) -> Bool {
        guard (try? FileSystem.makeDirectories(FileSystem.parent(of: path))) != nil else { return false }
        let descriptor = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        guard ftruncate(descriptor, off_t(offset)) == 0 else { return false }
        return data.withUnsafeBytes { buffer in
            var done = 0
            while done < buffer.count {
                let count = pwrite(descriptor, buffer.baseAddress! + done, buffer.count - done, off_t(offset + done))
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { return false }
                done += count
            }
            return true
        }
    }
}
