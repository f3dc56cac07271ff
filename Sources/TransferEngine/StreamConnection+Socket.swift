internal import Curl
internal import Glibc
internal import TransferModel

/// What one turn of a stream's pump leaves the engine to do.
enum StreamStep {
    case running
    /// Every byte written before start-tls went: the TLS handshake can start.
    case upgrade
    case failed(TaskError)
    /// Both sides closed and the end was read: the task completes without error.
    case finished
}

/// Moving bytes between the buffers and the socket, non-blocking. Engine thread.
extension StreamConnection {
    /// The most bytes one receive asks for.
    static let receiveChunk = 256 << 10

    /// Sends and receives until neither can move (CURLE_AGAIN, a full buffer, nothing to
    /// send), answers what the buffers can answer, and appends what the service should hear.
    func pump(now: Double, updates: inout [StreamUpdate]) -> StreamStep {
        fillSendBuffer(now: now)
        guard phase == .open else {
            answerReads(now: now)
            return .running
        }
        if let error = send(now: now) { return .failed(error) }
        if writeCloseRequested, !writeClosed, unsent.isEmpty, writes.isEmpty {
            // curl has no half-close: shut the socket's sending side down ourselves. Over TLS
            // this is a TCP FIN without a close_notify (libcurl 7.88 sends one only as it closes).
            if let socket = handle.activeSocket { shutdown(socket, Int32(SHUT_WR)) }
            writeClosed = true
            updates.append(.writeClosed)
        }
        let wasOpen = !peerClosed && !readClosed
        if let error = receive() { return .failed(error) }
        if wasOpen, peerClosed || readClosed { updates.append(.readClosed) }
        answerReads(now: now)
        // Coalesced as transfers' progress is: at most one report per interval.
        if now - lastCountsReport >= Transfer.reportInterval { reportCounts(now: now, &updates) }
        if let request = tlsRequest, !isTLS, upgrade == nil, sent >= request.after { return .upgrade }
        return isFinished ? .finished : .running
    }

    /// Appends the running totals if they changed since the last report.
    func reportCounts(now: Double, _ updates: inout [StreamUpdate]) {
        guard reported != (receivedTotal, sent) else { return }
        reported = (receivedTotal, sent)
        lastCountsReport = now
        updates.append(.counts(received: receivedTotal, sent: sent))
    }

    /// When the stream next needs a pump without any socket activity: a waiting read's or
    /// write's deadline, or the report of totals that changed since the last one.
    var nextWake: Double? {
        let counts = reported != (receivedTotal, sent) ? lastCountsReport + Transfer.reportInterval : nil
        return [nextDeadline, counts].compactMap { $0 }.min()
    }

    /// Sends the buffered bytes the socket takes; before a requested TLS upgrade, only those
    /// written before it.
    private func send(now: Double) -> TaskError? {
        sendBlocked = false
        while var bytes = unsent.front {
            if let request = tlsRequest, !isTLS {
                let left = request.after - sent
                guard left > 0 else { break }
                bytes = bytes.prefix(left)
            }
            switch handle.send(bytes) {
            case .moved(let count):
                unsent.drop(count)
                sent += count
                fillSendBuffer(now: now)
            case .again, .closed:
                sendBlocked = true
                return nil
            case .failed(let code):
                return URLErrorMapping.error(for: code, detail: handle.errorMessage)
            }
        }
        return nil
    }

    /// Receives while there is room (the socket is left unread when the buffer is full).
    private func receive() -> TaskError? {
        while !peerClosed, !readClosed, received.count < job.receiveCapacity {
            let (io, bytes) = handle.receive(upTo: min(Self.receiveChunk, job.receiveCapacity - received.count))
            switch io {
            case .moved(let count):
                received.append(bytes)
                receivedTotal += count
            case .again:
                return nil
            case .closed:
                peerClosed = true
            case .failed(let code):
                return URLErrorMapping.error(for: code, detail: handle.errorMessage)
            }
        }
        return nil
    }

    /// What the engine's wait watches on this stream's socket, if anything.
    var watch: SocketWatch? {
        guard let socket else { return nil }
        let reading = !peerClosed && !readClosed && received.count < job.receiveCapacity
        let writing = sendBlocked && !unsent.isEmpty
        guard reading || writing else { return nil }
        return SocketWatch(socket: socket, readable: reading, writable: writing)
    }
}
