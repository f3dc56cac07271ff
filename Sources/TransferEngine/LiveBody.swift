package import FoundationEssentials
internal import Synchronization

/// A data task's body as it arrives: the engine thread appends what `Transfer.take` keeps, and
/// readers that follow the running task (`GET /v1/tasks/{tid}/body`, `didReceiveData` with its
/// bytes) copy from it at their own pace. The bytes are the body itself (a data task's body is
/// held in memory anyway, up to `maxDataTaskBodySize`), so a slow reader costs nothing and
/// never holds the transfer back: there is no per-reader buffer to fill.
///
/// One per attempt of a data task, made by the service as the task starts and ended by it when
/// the attempt ends (`finish`). Shared by reference between threads: every field is behind the
/// lock, and the wake-ups run after it is released: the engine's at once (it holds no other
/// lock), the service's (`finish`, `supply`, under its own lock) handed back as `Wakes`.
package final class LiveBody: Sendable {
    /// How the body ended: whole (the task succeeded), or not (failed, cancelled, retried,
    /// turned into a download).
    package enum Ending: Sendable, Equatable {
        case complete
        case failed(String)
    }

    /// What one read gave.
    package enum Read: Sendable, Equatable {
        case bytes(Int)
        /// None past the offset yet: the reader's wake is called once some come or the body ends.
        case wait
        case end
        case failed(String)
    }

    private struct State {
        var bytes = Data()
        var ending: Ending?
        var waiting: [Int: @Sendable () -> Void] = [:]
        var lastReader = 0

        mutating func takeWaiting() -> [@Sendable () -> Void] {
            guard !waiting.isEmpty else { return [] }
            let woken = Array(waiting.values)
            waiting.removeAll(keepingCapacity: true)
            return woken
        }
    }

    private let state = Mutex(State())

    package init() {}

    /// The bytes so far (the whole body once it ended complete).
    package var contents: Data { state.withLock { $0.bytes } }

    package var count: Int { state.withLock { $0.bytes.count } }

    package var ending: Ending? { state.withLock { $0.ending } }

    /// Engine thread: keeps a chunk and wakes the readers waiting for it.
    func append(_ chunk: UnsafeRawBufferPointer) {
        let woken = state.withLock { state -> [@Sendable () -> Void] in
            state.bytes.append(contentsOf: chunk)
            return state.takeWaiting()
        }
        for wake in woken { wake() }
    }

    /// The readers a change woke, taken under the body's lock. `run()` them once the caller
    /// holds no lock of its own: a reader's wake answers its request, and may take other locks
    /// (a body stream read to its end lets its task go under the service's lock).
    package struct Wakes: Sendable {
        fileprivate let readers: [@Sendable () -> Void]
        package func run() { for wake in readers { wake() } }
    }

    /// The attempt ended: readers get the rest and then the end (or the failure), once the
    /// wakes run.
    package func finish(_ ending: Ending) -> Wakes {
        Wakes(readers: state.withLock { state -> [@Sendable () -> Void] in
            guard state.ending == nil else { return [] }
            state.ending = ending
            return state.takeWaiting()
        })
    }

    /// The task succeeded with `body`: what arrived is it (or, when nothing arrived through the
    /// engine, as when the URL cache answered, it becomes it), and readers get the end, once the
    /// wakes run.
    package func finish(with body: Data) -> Wakes {
        Wakes(readers: state.withLock { state -> [@Sendable () -> Void] in
            guard state.ending == nil else { return [] }
            if state.bytes.isEmpty { state.bytes = body }
            state.ending = state.bytes.count == body.count ? .complete : .failed("the body that completed is not the one that arrived")
            return state.takeWaiting()
        })
    }

    /// The whole body at once, when it came from elsewhere than a transfer (the URL cache);
    /// readers get it once the wakes run.
    package func supply(_ body: Data) -> Wakes {
        Wakes(readers: state.withLock { state -> [@Sendable () -> Void] in
            guard state.ending == nil, state.bytes.isEmpty else { return [] }
            state.bytes = body
            return state.takeWaiting()
        })
    }

    /// A new reader's id, for `read` and `leave`.
    package func join() -> Int {
        state.withLock { state in
            state.lastReader += 1
            return state.lastReader
        }
    }

    /// A reader is gone: its wake is dropped.
    package func leave(_ reader: Int) {
        _ = state.withLock { $0.waiting.removeValue(forKey: reader) }
    }

    /// Copies the bytes from `offset` (up to `end`, exclusive, when given) into `buffer`. A
    /// reader of the whole body (`end` nil) gets its last byte only once the body ended complete,
    /// so an answer that ends cleanly always means a task that succeeded (one with a
    /// Content-Length would otherwise end cleanly though the task then failed its checksum).
    package func read(_ reader: Int, at offset: Int, end: Int? = nil, holdingLastByte: Bool = true, into buffer: UnsafeMutableRawBufferPointer,
                      wake: @escaping @Sendable () -> Void) -> Read {
        state.withLock { state in
            let held = holdingLastByte && end == nil && state.ending != .complete ? 1 : 0
            let available = max(0, min(state.bytes.count - held, end ?? .max))
            if offset < available {
                let count = min(buffer.count, available - offset)
                state.bytes.withUnsafeBytes { bytes in
                    buffer.baseAddress!.copyMemory(from: bytes.baseAddress! + offset, byteCount: count)
                }
                return .bytes(count)
            }
            if let end, offset >= end { return .end }
            switch state.ending {
            case .complete?: return .end
            case .failed(let reason)?: return .failed(reason)
            case nil:
                state.waiting[reader] = wake
                return .wait
            }
        }
    }

    /// Copies `range` of what has arrived (for events that carry the bytes).
    package func bytes(_ range: Range<Int>) -> Data {
        state.withLock { state in
            let upper = min(range.upperBound, state.bytes.count)
            guard range.lowerBound < upper else { return Data() }
            return state.bytes.subdata(in: range.lowerBound..<upper)
        }
    }
}
