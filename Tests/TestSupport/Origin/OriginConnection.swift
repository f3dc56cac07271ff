import Foundation
internal import Glibc

/// One accepted connection of an ``OriginServer``, owned by its own thread: reads requests,
/// asks the handler what to do, and does it, until either side closes or the server stops.
final class OriginConnection {
    private let stream: SocketStream
    private let index: Int
    private let state: OriginState

    /// Whether the connection can carry another request after a behaviour.
    enum Outcome {
        case keepAlive
        case close
    }

    init(fd: Int32, index: Int, state: OriginState) {
        self.stream = SocketStream(fd: fd, stopFD: state.listener.stopPipe.read)
        self.index = index
        self.state = state
    }

    func run() {
        defer {
            state.socketClosing(stream.fd)
            stream.close()
            state.connectionClosed()
        }
        do {
            while let request = try readRequest() {
                let behavior = state.handler(request)
                guard try perform(behavior, for: request) == .keepAlive else { return }
            }
        } catch SocketError.malformed(let reason) {
            let body = Array("origin: \(reason)\n".utf8)
            let head = "HTTP/1.1 400 Bad Request\r\nContent-Length: \(body.count)\r\nConnection: close\r\n\r\n"
            try? stream.write(Array(head.utf8) + body, until: .now + .seconds(5))
        } catch {
            // The client went away, or the server stopped: nothing to answer.
        }
    }

    /// Reads the next request, body included; nil if the client closed between requests.
    private func readRequest() throws -> OriginRequest? {
        guard let headBytes = try stream.readHead(until: nil) else { return nil }
        let head = try HTTPHead(parsing: headBytes)
        let (method, target, version) = head.startLine
        guard version.hasPrefix("HTTP/1.") else {
            throw SocketError.malformed("unsupported version \(version.debugDescription)")
        }
        let headers = head.headerDictionary
        let framing = try BodyFraming(headers: headers, fallback: .none)
        if HeaderLookup.value("Expect", in: headers)?.lowercased() == "100-continue",
           framing != .none, framing != .length(0) {
            // curl waits up to a second for this before sending a large body anyway.
            try stream.write(Array("HTTP/1.1 100 Continue\r\n\r\n".utf8), until: nil)
        }
        let body = try stream.readBody(framing, until: nil)
        return state.record { requestIndex in
            OriginRequest(
                method: method, path: target, version: version, headers: headers, body: body,
                index: requestIndex, connectionIndex: index
            )
        }
    }

    /// Does what `behavior` says; returns whether the connection may carry another request.
    private func perform(_ behavior: OriginBehavior, for request: OriginRequest) throws -> Outcome {
        let sendsBody = request.method != "HEAD"
        switch behavior {
        case .respond(let status, let headers, let body):
            var headers = headers
            Self.addLength(body.count, to: &headers)
            let outcome = Self.outcome(request, headers)
            Self.markClose(outcome, in: &headers)
            try send(Self.head(status, headers) + (sendsBody ? Array(body) : []))
            return outcome

        case .chunked(let status, let headers, let chunks, let interval):
            var headers = headers
            if HeaderLookup.value("Transfer-Encoding", in: headers) == nil {
                headers["Transfer-Encoding"] = "chunked"
            }
            let outcome = Self.outcome(request, headers)
            Self.markClose(outcome, in: &headers)
            try send(Self.head(status, headers))
            guard sendsBody else { return outcome }
            for (position, chunk) in chunks.enumerated() {
                if position > 0, interval > .zero { try pause(for: interval) }
                try send(ChunkEncoder.chunk(chunk))
            }
            try send(ChunkEncoder.last)
            return outcome

        case .chunkedCut(let status, var headers, let chunks):
            headers["Transfer-Encoding"] = "chunked"
            Self.markClose(.close, in: &headers)
            try send(Self.head(status, headers))
            for chunk in chunks where sendsBody { try send(ChunkEncoder.chunk(chunk)) }
            return .close

        case .closeDelimited(let status, let headers, let body):
            var headers = headers
            Self.markClose(.close, in: &headers)
            try send(Self.head(status, headers) + (sendsBody ? Array(body) : []))
            return .close

        case .slowBody(let status, let headers, let body, let bytesPerWrite, let interval):
            var headers = headers
            Self.addLength(body.count, to: &headers)
            let outcome = Self.outcome(request, headers)
            Self.markClose(outcome, in: &headers)
            try send(Self.head(status, headers))
            let bytes = Array(body)
            let step = max(1, bytesPerWrite)
            var offset = 0
            while sendsBody, offset < bytes.count {
                if offset > 0 { try pause(for: interval) }
                let end = min(offset + step, bytes.count)
                try send(bytes[offset..<end])
                offset = end
            }
            return outcome

        case .stallAfterHeaders(let status, let headers, let contentLength, let bodyPrefix):
            var headers = headers
            if let contentLength { headers["Content-Length"] = String(contentLength) }
            try send(Self.head(status, headers) + Array(bodyPrefix))
            try pause(for: nil)
            return .close

        case .resetMidBody(let afterBytes, let status, let headers, let body):
            var headers = headers
            Self.addLength(body.count, to: &headers)
            try send(Self.head(status, headers) + Array(body.prefix(max(0, afterBytes))))
            stream.resetAndClose()
            return .close

        case .wrongLength(let declared, let status, let headers, let body):
            var headers = headers
            headers["Content-Length"] = String(declared)
            try send(Self.head(status, headers) + Array(body))
            return .close

        case .delayed(let delay, let next):
            try pause(for: delay)
            return try perform(next, for: request)

        case .closeWithoutResponse:
            return .close

        case .resetWithoutResponse:
            stream.resetAndClose()
            return .close
        }
    }

    private func send(_ bytes: some Collection<UInt8>) throws {
        try stream.write(bytes, until: nil)
    }

    /// Waits for `duration` (nil: for ever). Ends early by throwing when the server stops or the
    /// client closes or resets; bytes the client sends meanwhile are kept for the next request.
    private func pause(for duration: Duration?) throws {
        let deadline = duration.map { ContinuousClock.now + $0 }
        while try stream.wait(for: Int32(POLLIN), until: deadline) == .ready {
            if try stream.fill(until: deadline) == 0 {
                throw SocketError.peerClosed
            }
        }
    }
}
