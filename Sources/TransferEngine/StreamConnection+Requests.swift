internal import TransferModel

/// A read waiting for bytes: answered once `min` bytes are there, the stream ends, or at its
/// deadline with what arrived (maybe nothing).
struct PendingRead {
    let min: Int
    let max: Int
    let deadline: Double
    let reply: @Sendable (StreamReply) -> Void
}

/// A write whose bytes did not all fit in the send buffer: the rest goes in as the socket takes
/// bytes; at its deadline it answers with how many were taken, and the rest is dropped.
struct PendingWrite {
    var bytes: [UInt8]
    var taken: Int
    let deadline: Double
    let reply: @Sendable (StreamReply) -> Void
}

/// The client's commands on a stream, and answering them from its buffers. Engine thread.
extension StreamConnection {
    /// How many reads and how many writes may wait at once on one stream.
    static let maxPending = 16

    /// Takes a command; a refusal is answered at once (the stream is unchanged).
    func accept(_ command: StreamCommand, now: Double) {
        switch command {
        case .write(_, let bytes, let timeout, let reply):
            if writeCloseRequested { return reply(.refused(code: "write_closed", message: "the stream's write side is closed")) }
            guard writes.count < Self.maxPending else { return reply(.refused(code: "too_many_pending", message: "\(Self.maxPending) writes already wait on this stream")) }
            writes.append(PendingWrite(bytes: bytes, taken: 0, deadline: now + timeout, reply: reply))
        case .read(_, let min, let max, let wait, let reply):
            if readClosed { return reply(.refused(code: "read_closed", message: "the stream's read side is closed")) }
            if endDelivered { return reply(.read([], ended: true)) }
            guard reads.count < Self.maxPending else { return reply(.refused(code: "too_many_pending", message: "\(Self.maxPending) reads already wait on this stream")) }
            reads.append(PendingRead(min: min, max: max, deadline: now + wait, reply: reply))
        case .closeWrite(_, let reply):
            if writeCloseRequested { return reply(.refused(code: "write_closed", message: "the stream's write side is already closed")) }
            writeCloseRequested = true
            reply(.done)
        case .closeRead(_, let reply):
            if readClosed { return reply(.refused(code: "read_closed", message: "the stream's read side is already closed")) }
            readClosed = true
            received.removeAll()
            for read in reads { read.reply(.read([], ended: true)) }
            reads.removeAll()
            reply(.done)
        case .startTLS(_, let reply):
            if tlsRequested || isTLS { return reply(.refused(code: "tls_already_started", message: "the stream already uses TLS or is starting it")) }
            if writeCloseRequested { return reply(.refused(code: "write_closed", message: "TLS cannot start after the write side closed")) }
            tlsRequested = true
            // Bytes of writes already posted go first, in plain text.
            tlsRequest = (reply, accepted + writes.reduce(0) { $0 + $1.bytes.count - $1.taken })
        }
    }

    /// Moves bytes from waiting writes into the send buffer, in order, while it has room;
    /// answers each write that is wholly taken, or whose deadline passed.
    func fillSendBuffer(now: Double) {
        while let first = writes.first {
            let room = job.sendCapacity - unsent.count
            let rest = first.bytes.count - first.taken
            if room > 0, rest > 0 {
                let count = min(room, rest)
                unsent.append(first.taken == 0 && count == rest ? first.bytes : Array(first.bytes[first.taken..<(first.taken + count)]))
                writes[0].taken += count
                accepted += count
            }
            let write = writes[0]
            if write.taken == write.bytes.count {
                writes.removeFirst()
                write.reply(.written(accepted: write.taken, timedOut: false))
            } else if now >= write.deadline {
                writes.removeFirst()
                write.reply(.written(accepted: write.taken, timedOut: true))
            } else {
                return
            }
        }
    }

    /// Answers the reads the buffer (or the end, or their deadline) can answer, in order.
    func answerReads(now: Double) {
        while let read = reads.first {
            let ended = peerClosed
            guard received.count >= read.min || ended || now >= read.deadline else { return }
            reads.removeFirst()
            let bytes = received.take(upTo: read.max)
            let last = ended && received.isEmpty
            if last { endDelivered = true }
            read.reply(.read(bytes, ended: last))
        }
    }

    /// The earliest deadline of a waiting read or write, if any.
    var nextDeadline: Double? {
        (reads.map(\.deadline) + writes.map(\.deadline)).min()
    }

    /// Both sides are done and the last bytes were read (or reading was given up): the task
    /// completes without error.
    var isFinished: Bool {
        (endDelivered || readClosed) && writeClosed && writes.isEmpty && reads.isEmpty
    }

    /// The stream ended: every waiting command gets `reply`.
    func answerAll(_ reply: StreamReply) {
        for read in reads { read.reply(reply) }
        for write in writes { write.reply(reply) }
        tlsRequest?.reply(reply)
        reads.removeAll()
        writes.removeAll()
        tlsRequest = nil
    }
}
