internal import Glibc
internal import Synchronization

/// The steps of `HTTPServer.stop()`: refuse new requests (503), answer the held ones, end the
/// streamed bodies, wait for them to flush, stop the daemon. A value made and used once by the
/// thread running stop().
///
/// The listen socket stays open until MHD_stop_daemon: a connection made meanwhile is answered
/// 503 shutting_down without reaching the handler (`ServerCore.admit`). MHD_quiesce_daemon is
/// not used: with an epoll thread pool it races the workers' own removal of the listen socket
/// from their epoll sets, and the loser calls MHD_PANIC ("Failed to remove listen FD from
/// epoll set"), which aborted a test process in CI.
///
/// The order matters in 0.9.75: MHD_stop_daemon with a connection still suspended aborts
/// the process ("it is an API violation to call MHD_stop_daemon while having suspended
/// connections"), so every responder is answered (which resumes its connection), every
/// streamed body is cancelled (which resumes it if it waits for data, and ends it with an error
/// at its next read instead of suspending again), and the server waits until the pool threads
/// have queued those answers and every resume call has returned.
/// - SeeAlso: https://www.gnu.org/software/libmicrohttpd/manual/html_node/microhttpd_002dflow.html
struct ShutdownDrain {
    let core: ServerCore
    /// How long answers in progress get to reach their clients before connections close.
    var flushGrace: Duration = .seconds(2)
    /// How long to wait, at most, for resumed connections to leave the suspended state.
    var resumeLimit: Duration = .seconds(10)

    func run(_ daemon: Daemon) {
        let answer = core.shuttingDownResponse
        let stopping = core.beginStopping()
        for responder in stopping.responders {
            responder.respond(answer)
        }
        for stream in stopping.streams {
            stream.cancel()
        }
        _ = wait(upTo: flushGrace) {
            core.unansweredCount == 0 && core.inFlightCount.load(ordering: .relaxed) == 0
        }
        let resumed = wait(upTo: resumeLimit) {
            core.suspendedCount.load(ordering: .relaxed) == 0 && core.suspendedStreamCount.load(ordering: .relaxed) == 0
        }
        guard resumed else {
            // A connection that never came back from resuming: stopping now would abort the
            // whole process, so the daemon is left running (answering 503) instead.
            return
        }
        daemon.stop()
    }

    /// Polls `condition` every millisecond until it holds (true) or `limit` passes (false).
    /// Only stop() waits here, so a short poll is simpler than a condition variable fed
    /// from every pool thread.
    private func wait(upTo limit: Duration, until condition: () -> Bool) -> Bool {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: limit)
        while !condition() {
            if clock.now >= deadline { return false }
            usleep(1_000)
        }
        return true
    }
}
