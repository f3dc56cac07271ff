public import FoundationEssentials
internal import Synchronization
internal import TransferEngine
internal import TransferModel

/// One reader following a running data task's body (`GET /v1/tasks/{tid}/body`, issue 21): its
/// position in the task's `LiveBody` and where it stops. Reads come one at a time from the
/// connection that serves it; the position is behind a lock only to be Sendable.
///
/// Tenancy: made only by `TransferService.followBody`, which checks the task's owner first.
public final class BodyFollower: Sendable {
    /// What one read gave.
    public enum Read: Sendable, Equatable {
        case bytes(Int)
        /// Nothing new yet: `wake` is called once there is.
        case wait
        case end
        case failed
    }

    private let live: LiveBody
    private let reader: Int
    /// Past the last byte to serve (nil: to the body's end).
    private let end: Int?
    /// Whether the body's last byte waits for its clean end (an HTTP answer's reader; a stream's
    /// reads say the end themselves).
    private let holdsLastByte: Bool
    private let position: Mutex<Int>

    init(_ live: LiveBody, from start: Int, to end: Int?, holdingLastByte: Bool = true) {
        self.live = live
        self.reader = live.join()
        self.end = end
        self.holdsLastByte = holdingLastByte
        position = Mutex(start)
    }

    /// Copies the next bytes into `buffer`.
    public func read(into buffer: UnsafeMutableRawBufferPointer, wake: @escaping @Sendable () -> Void) -> Read {
        position.withLock { position in
            switch live.read(reader, at: position, end: end, holdingLastByte: holdsLastByte, into: buffer, wake: wake) {
            case .bytes(let count):
                position += count
                return .bytes(count)
            case .wait: return .wait
            case .end:
                // A closed range the body ended before reaching is an error, not a short answer.
                if let end, position < end { return .failed }
                return .end
            case .failed: return .failed
            }
        }
    }

    /// The reader is gone (answer sent, client left, server stopping).
    public func close() { live.leave(reader) }
}

/// What `GET /v1/tasks/{tid}/body` serves.
public enum TaskBody: Sendable {
    /// A completed task's whole body.
    case complete(Data, contentType: String?)
    /// A running data task's body, followed as it arrives: what has arrived so far, then the
    /// rest. `expectedLength` is the response's Content-Length when it had one (decoded bodies
    /// excepted), `available` what is there now.
    case running(RunningBody)
}

/// A running data task's body, before a reader follows it from some offset.
public struct RunningBody: Sendable {
    let live: LiveBody
    public let contentType: String?
    public let expectedLength: Int?
    public var available: Int { live.count }

    /// A reader from `start` to `end` (exclusive; nil: to the end of the body).
    public func follow(from start: Int = 0, to end: Int? = nil) -> BodyFollower {
        BodyFollower(live, from: start, to: end)
    }
}

extension TransferService {
    /// A task's body: whole once it completed (`body(task:owner:)`'s rules), or followed while a
    /// data task runs and has its response. Nil: a running task without its response yet (the
    /// caller waits for it through the progress long-poll).
    public func followBody(task id: Int, owner: String?) throws -> TaskBody? {
        enum Held { case no, other, waiting, running(RunningBody) }
        let held = try state.withLock { s throws -> Held in
            guard s.tasks.contains(id) else { return .no }
            let entry = try visibleTask(s, id, owner)
            guard entry.task.state != .completed, entry.task.kind == .data else { return .other }
            guard let response = entry.task.response else { return .waiting }
            guard let live = entry.liveBody else { return .other }  // data: and file: tasks: whole when done
            // A decoded body (Content-Encoding) is longer than its Content-Length says.
            let coded = ResponseInfo.value(of: "Content-Encoding", in: response.headers).map { $0.lowercased() != "identity" } ?? false
            return .running(RunningBody(
                live: live, contentType: ResponseInfo.value(of: "Content-Type", in: response.headers),
                expectedLength: coded ? nil : response.expectedContentLength))
        }
        switch held {
        case .running(let body): return .running(body)
        case .waiting: return nil
        case .no, .other:
            let (body, contentType) = try body(task: id, owner: owner)
            return .complete(body, contentType: contentType)
        }
    }
}
