internal import Dispatch
internal import FoundationEssentials
internal import Synchronization
internal import TransferModel
internal import TransferEngine

/// The stream a data task became when its client answered its response with becomeStream
/// (issue 21): the task's stream reads (`GET /v1/tasks/{tid}/read`) give the response's body from
/// its first byte as it arrives, as URLSessionStreamTask's reads give what follows the head.
/// libcurl owns the connection, so the stream reads only: writes and start-tls are refused.
///
/// One cursor per task (`BodyFollower`), so reads share it as reads of a socket do. A read that
/// waits holds no thread: the body's wake, or its deadline, answers it.
final class BodyStreamReads: Sendable {
    private struct State {
        var current: PendingRead?
        var closed = false
        var finished = false
    }

    private let follower: BodyFollower
    private let state = Mutex(State())
    /// Called once when the stream is read to its end, failed, or closed for reading: the task
    /// may then leave memory as completed tasks do.
    private let onFinished: @Sendable () -> Void

    init(_ follower: BodyFollower, onFinished: @escaping @Sendable () -> Void) {
        self.follower = follower
        self.onFinished = onFinished
    }

    /// Carries out a stream command on the body; answered once, from any thread.
    func carryOut(_ command: StreamCommand) {
        switch command {
        case .read(_, let min, let max, let wait, let reply):
            let read = PendingRead(follower: follower, min: Swift.max(0, Swift.min(min, max)), max: max) { [self] answer in
                if case .read(_, ended: true) = answer { finish() } else if case .failed = answer { finish() }
                reply(answer)
            }
            // One read waits at a time (the cursor has one wake): a newer one answers the older.
            let (earlier, closed) = state.withLock { state -> (PendingRead?, Bool) in
                let earlier = state.current
                state.current = state.closed ? nil : read
                return (earlier, state.closed)
            }
            earlier?.answerNow()
            if closed { return reply(.read([], ended: true)) }
            read.start(wait: wait)
        case .write(_, _, _, let reply):
            reply(.refused(code: "write_closed", message: "a stream made by becomeStream reads the response only: its connection is libcurl's, and nothing can be written to it"))
        case .startTLS(_, let reply):
            reply(.refused(code: "write_closed", message: "a stream made by becomeStream cannot start TLS: its connection is libcurl's"))
        case .closeWrite(_, let reply):
            reply(.done)  // there was never a writing side
        case .closeRead(_, let reply):
            let current = state.withLock { state -> PendingRead? in
                state.closed = true
                defer { state.current = nil }
                return state.current
            }
            current?.answerNow()
            follower.close()
            finish()
            reply(.done)
        }
    }

    private func finish() {
        let first = state.withLock { state -> Bool in
            defer { state.finished = true }
            return !state.finished
        }
        if first { onFinished() }
    }
}

extension TransferService {
    /// A data task's body stream was read to its end or closed: a completed task may now leave
    /// memory (kept until then, so a reader behind the completion still finds its cursor).
    func bodyStreamFinished(task id: Int) {
        state.withLock { s in
            s.tasks[id]?.streamOfBody = nil
            if s.tasks[id]?.task.state == .completed { markLeaving(&s, task: id) }
        }
    }
}

/// One read of a body stream: answered with at least `min` bytes, the end, the failure, or what
/// it has at its deadline.
private final class PendingRead: Sendable {
    private struct State {
        var bytes: [UInt8] = []
        var answered = false
    }

    private let follower: BodyFollower
    private let min: Int
    private let max: Int
    private let reply: @Sendable (StreamReply) -> Void
    private let state = Mutex(State())

    init(follower: BodyFollower, min: Int, max: Int, reply: @escaping @Sendable (StreamReply) -> Void) {
        self.follower = follower
        self.min = min
        self.max = max
        self.reply = reply
    }

    /// Answered at once with what it has (a newer read came, or the read side closed).
    func answerNow() { answer(ended: false) }

    func start(wait: Double) {
        if wait > 0 {
            DispatchQueue.global().asyncAfter(deadline: .now() + wait) { [self] in answer(ended: false) }
        }
        pull(deadlinePassed: wait <= 0)
    }

    /// Takes what is there; answers once it has enough, or the body ended.
    private func pull(deadlinePassed: Bool) {
        var ended = false
        var failed = false
        let enough = state.withLock { state -> Bool in
            guard !state.answered else { return false }
            var buffer = [UInt8](repeating: 0, count: max - state.bytes.count)
            while !buffer.isEmpty {
                let result = buffer.withUnsafeMutableBytes { raw in
                    follower.read(into: raw) { [self] in pull(deadlinePassed: false) }
                }
                switch result {
                case .bytes(let count):
                    state.bytes += buffer[..<count]
                    buffer = [UInt8](repeating: 0, count: max - state.bytes.count)
                    continue
                case .wait: break
                case .end: ended = true
                case .failed: failed = true
                }
                break
            }
            return state.bytes.count >= min || ended || failed || deadlinePassed
        }
        if failed { return answer(failure: true) }
        if enough { answer(ended: ended) }
    }

    private func answer(ended: Bool = false, failure: Bool = false) {
        let bytes = state.withLock { state -> [UInt8]? in
            guard !state.answered else { return nil }
            state.answered = true
            return state.bytes
        }
        guard let bytes else { return }
        if failure && bytes.isEmpty {
            reply(.failed(TaskError(.networkConnectionLost, "the response's body ended before it was whole")))
        } else {
            reply(.read(bytes, ended: ended))
        }
    }
}
