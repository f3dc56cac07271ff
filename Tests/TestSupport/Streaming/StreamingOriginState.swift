import Foundation
internal import Glibc

/// The shared state of one ``StreamingOrigin``: listener, stop pipe, rate and records, shared by
/// the server object, its accept thread and its connection threads (which retain this, not the
/// server, so dropping the server stops everything).
///
/// `@unchecked Sendable`: every `var` is read and written only while `condition` is locked; the
/// descriptors are `let`s, the listener is closed only by the accept thread and the stop pipe
/// only in `deinit`.
final class StreamingOriginState: @unchecked Sendable {
    let resource: GeneratedBytes
    let etag: String
    let listenFD: Int32
    let port: Int
    let stopPipe: (read: Int32, write: Int32)
    private let condition = NSCondition()

    var bytesPerSecond: Int?
    var responses: [ServedResponse] = []
    var uploads: [ReceivedUpload] = []
    private var threads = 0
    private var stopped = false

    init(resource: GeneratedBytes, etag: String, bytesPerSecond: Int?) throws {
        self.resource = resource
        self.etag = etag
        self.bytesPerSecond = bytesPerSecond
        (listenFD, port) = try SocketFactory.listenOnLoopback()
        do {
            stopPipe = try SocketFactory.makePipe()
        } catch {
            _ = close(listenFD)
            throw error
        }
    }

    deinit {
        _ = close(stopPipe.read)
        _ = close(stopPipe.write)
    }

    func locked<T>(_ body: (StreamingOriginState) -> T) -> T {
        condition.lock()
        defer { condition.unlock() }
        return body(self)
    }

    /// Starts a thread counted by ``stop()``; false once stopped.
    private func spawn(_ name: String, _ body: @escaping @Sendable () -> Void) -> Bool {
        let admitted = locked { state in
            guard !state.stopped else { return false }
            state.threads += 1
            return true
        }
        guard admitted else { return false }
        let thread = Thread { [self] in
            body()
            locked { state in
                state.threads -= 1
                state.condition.broadcast()
            }
        }
        thread.name = name
        thread.start()
        return true
    }

    func startAccepting() {
        let started = spawn("StreamingOrigin accept :\(port)") { [self] in acceptLoop() }
        if !started { _ = close(listenFD) }
    }

    private func acceptLoop() {
        defer { _ = close(listenFD) }
        while true {
            var fds = [
                pollfd(fd: stopPipe.read, events: Int16(POLLIN), revents: 0),
                pollfd(fd: listenFD, events: Int16(POLLIN), revents: 0),
            ]
            if poll(&fds, nfds_t(fds.count), -1) < 0 {
                if errno == EINTR { continue }
                return
            }
            if fds[0].revents != 0 { return }
            guard fds[1].revents != 0 else { continue }
            let accepted: Int32?
            do {
                accepted = try SocketFactory.accept(from: listenFD)
            } catch {
                return  // The listener itself failed: nothing more will connect.
            }
            guard let fd = accepted else { continue }
            let started = spawn("StreamingOrigin connection") { [self] in
                StreamingConnection(fd: fd, state: self).run()
            }
            if !started { _ = close(fd) }
        }
    }

    // MARK: Records

    /// Appends a response record; returns its index.
    func begin(_ response: ServedResponse) -> Int {
        locked { state in
            state.responses.append(response)
            return state.responses.count - 1
        }
    }

    func sent(_ count: Int, response index: Int, finished: Bool = false) {
        locked { state in
            state.responses[index].bytesSent += count
            if finished { state.responses[index].finished = true }
        }
    }

    func begin(_ upload: ReceivedUpload) -> Int {
        locked { state in
            state.uploads.append(upload)
            return state.uploads.count - 1
        }
    }

    func received(_ count: Int, upload index: Int, sha256: String? = nil) {
        locked { state in
            state.uploads[index].bytesReceived += count
            if let sha256 { state.uploads[index].sha256 = sha256 }
        }
    }

    // MARK: Stopping

    /// Signals every thread to finish, then waits (at most `timeout`) until all have.
    func stop(timeout: Double = 5) {
        condition.lock()
        defer { condition.unlock() }
        if !stopped {
            stopped = true
            var byte: UInt8 = 1
            _ = write(stopPipe.write, &byte, 1)
        }
        let deadline = Date(timeIntervalSinceNow: timeout)
        while threads > 0, condition.wait(until: deadline) {}
    }
}
