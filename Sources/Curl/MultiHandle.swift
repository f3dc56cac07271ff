internal import CCurl

/// The libcurl multi handle. Not Sendable: one dedicated thread creates it, adds and removes easy
/// handles, and runs `perform`/`poll`. Other threads only reach it through its `MultiWaker`.
/// Tear-down is explicit (`close()`), never in deinit, so curl cannot call back into freed objects.
public final class MultiHandle {
    private var raw: UnsafeMutableRawPointer?
    /// Easy handles by their C pointer, so completions map back to the Swift owner.
    private var handles: [UnsafeMutableRawPointer: EasyHandle] = [:]
    public let waker: MultiWaker
    /// Every socket its transfers opened and its DSCP marking; lives until after
    /// curl_multi_cleanup, which closes the last cached connections through it.
    let socketMarks = SocketMarks()

    /// Put on every easy handle added (`EasyOption.connectionGate`), so no transfer of this
    /// multi handle connects anywhere the gate refuses; nil: connections are not checked.
    private let connectionGate: ConnectionGate?

    public init(connectionGate: ConnectionGate? = nil) throws(CurlMultiError) {
        self.connectionGate = connectionGate
        CurlLibrary.initialise()
        guard let raw = curl_multi_init() else { throw CurlMultiError(rawValue: Int(CURLM_OUT_OF_MEMORY.rawValue)) }
        // libcurl's default since 7.62, set anyway because HTTP/2 depends on it: transfers to
        // one h2 origin become streams of one connection. (HTTP/1.1 pipelining is gone from
        // libcurl, so httpShouldUsePipelining has nothing to turn on.)
        // - SeeAlso: https://curl.se/libcurl/c/CURLMOPT_PIPELINING.html
        let multiplexing = transferd_multi_setopt_long(raw, CURLMOPT_PIPELINING, Int(CURLPIPE_MULTIPLEX))
        guard multiplexing == CURLM_OK else {
            curl_multi_cleanup(raw)
            throw CurlMultiError(rawValue: Int(multiplexing.rawValue))
        }
        self.raw = raw
        self.waker = MultiWaker(raw)
    }

    /// - SeeAlso: https://curl.se/libcurl/c/CURLMOPT_MAX_HOST_CONNECTIONS.html (0 = no limit)
    public func setLimits(maxHostConnections: Int, maxTotalConnections: Int, maxCachedConnections: Int) throws(CurlMultiError) {
        guard let raw else { return }
        try CurlMultiError.check(transferd_multi_setopt_long(raw, CURLMOPT_MAX_HOST_CONNECTIONS, maxHostConnections))
        try CurlMultiError.check(transferd_multi_setopt_long(raw, CURLMOPT_MAX_TOTAL_CONNECTIONS, maxTotalConnections))
        try CurlMultiError.check(transferd_multi_setopt_long(raw, CURLMOPT_MAXCONNECTS, maxCachedConnections))
    }

    public var count: Int { handles.count }

    public func add(_ easy: EasyHandle) throws(CurlMultiError) {
        guard let raw else { throw CurlMultiError(rawValue: Int(CURLM_BAD_HANDLE.rawValue)) }
        // Best effort: without the record a reused connection keeps its first marking.
        try? easy.use(socketMarks)
        if let connectionGate {
            // Not best effort: a handle the gate cannot be put on is not run at all.
            do { try easy.set(.connectionGate(connectionGate)) } catch { throw CurlMultiError(rawValue: Int(CURLM_BAD_EASY_HANDLE.rawValue)) }
        }
        try CurlMultiError.check(curl_multi_add_handle(raw, easy.raw))
        handles[easy.raw] = easy
    }

    /// Removes a handle (running or finished). After this curl no longer calls its callbacks.
    public func remove(_ easy: EasyHandle) {
        guard let raw, handles.removeValue(forKey: easy.raw) != nil else { return }
        curl_multi_remove_handle(raw, easy.raw)
    }

    /// Drives every transfer as far as it can go without blocking; returns how many still run.
    @discardableResult
    public func perform() -> Int {
        guard let raw else { return 0 }
        var running: Int32 = 0
        curl_multi_perform(raw, &running)
        return Int(running)
    }

    /// Waits for activity, the timeout, or a `MultiWaker.wakeup()`.
    /// - SeeAlso: https://curl.se/libcurl/c/curl_multi_poll.html
    public func poll(timeoutMilliseconds: Int) {
        guard let raw else { return }
        var ready: Int32 = 0
        curl_multi_poll(raw, nil, 0, Int32(clamping: timeoutMilliseconds), &ready)
    }

    /// `poll`, also watching `sockets`; returns those found ready (in any order).
    public func poll(timeoutMilliseconds: Int, watching sockets: [SocketWatch]) -> [SocketReadiness] {
        guard let raw else { return [] }
        guard !sockets.isEmpty else {
            poll(timeoutMilliseconds: timeoutMilliseconds)
            return []
        }
        var fds = sockets.map { watch in
            curl_waitfd(fd: watch.socket, events: Int16((watch.readable ? CURL_WAIT_POLLIN : 0) | (watch.writable ? CURL_WAIT_POLLOUT : 0)), revents: 0)
        }
        var ready: Int32 = 0
        curl_multi_poll(raw, &fds, UInt32(fds.count), Int32(clamping: timeoutMilliseconds), &ready)
        // curl maps back only POLLIN, POLLOUT and POLLPRI; Linux reports a closed or reset TCP
        // connection as readable (RCV_SHUTDOWN), which the next receive then tells apart.
        return fds.compactMap { fd in
            guard fd.revents != 0 else { return nil }
            return SocketReadiness(socket: fd.fd, readable: fd.revents & Int16(CURL_WAIT_POLLIN | CURL_WAIT_POLLPRI) != 0,
                                   writable: fd.revents & Int16(CURL_WAIT_POLLOUT) != 0)
        }
    }

    /// The transfers that finished since the last call, with their result codes.
    public func completions() -> [(EasyHandle, CurlCode)] {
        guard let raw else { return [] }
        var finished: [(EasyHandle, CurlCode)] = []
        var remaining: Int32 = 0
        while let message = curl_multi_info_read(raw, &remaining) {
            guard message.pointee.msg == CURLMSG_DONE, let easyRaw = message.pointee.easy_handle,
                  let easy = handles[easyRaw] else { continue }
            finished.append((easy, CurlCode(message.pointee.data.result)))
        }
        return finished
    }

    /// Removes every easy handle, closes the waker, then frees the multi handle. Idempotent.
    public func close() {
        guard let raw else { return }
        for easy in handles.values { curl_multi_remove_handle(raw, easy.raw) }
        handles.removeAll()
        waker.invalidate()
        curl_multi_cleanup(raw)
        self.raw = nil
    }
}
