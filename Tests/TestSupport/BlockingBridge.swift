import Foundation

/// Runs blocking work (socket I/O, condition waits) on a thread of its own and awaits the result.
///
/// Swift concurrency's pool has one thread per core, two on our machines: a test that blocks one
/// of them while the daemon under test needs it can stall both. These helpers never do that.
enum BlockingBridge {
    static func run<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            let thread = Thread { continuation.resume(returning: body()) }
            thread.name = "TestSupport blocking call"
            thread.start()
        }
    }

    static func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            let thread = Thread { continuation.resume(with: Result { try body() }) }
            thread.name = "TestSupport blocking call"
            thread.start()
        }
    }
}
