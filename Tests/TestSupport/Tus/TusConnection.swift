import Foundation
internal import Glibc

/// One accepted connection of a ``TusServer``, owned by its own thread: reads requests and
/// serves them by the tus 1.0.0 core protocol and creation extension, with the faults the
/// server's closure picks. PATCH bodies are read incrementally and kept as they arrive.
/// - SeeAlso: https://tus.io/protocols/resumable-upload
final class TusConnection {
    private let stream: SocketStream
    private let state: TusState

    init(fd: Int32, state: TusState) {
        stream = SocketStream(fd: fd, stopFD: state.listener.stopPipe.read)
        self.state = state
    }

    /// Why the connection ends without an answer.
    private struct Abandon: Error {}

    func run() {
        defer { stream.close() }  // `ServerThreads` counts the connection closed once this returns
        do {
            while let bytes = try stream.readHead(until: nil) {
                let head = try HTTPHead(parsing: bytes)
                let (method, target, _) = head.startLine
                let request = TusRequestHead(method: method, path: target, headers: head.headerDictionary, index: state.nextHeadIndex())
                try serve(request, fault: state.faults(request))
            }
        } catch {
            // The client went away, a fault cut the connection, or the server stopped.
        }
    }

    private func serve(_ request: TusRequestHead, fault: TusFault) throws {
        let length = request.header("Content-Length").flatMap { Int($0) } ?? 0
        if case .status(let status) = fault {
            _ = try stream.read(exactly: length, until: nil)
            return try answer(request, status)
        }
        if request.method == "OPTIONS" {
            return try answer(request, 204, ["Tus-Version": "1.0.0", "Tus-Extension": "creation"])
        }
        guard request.header("Tus-Resumable") == "1.0.0" else {
            _ = try stream.read(exactly: length, until: nil)
            return try answer(request, 412, ["Tus-Version": "1.0.0"])
        }
        let id = request.path.hasPrefix("/files/") ? String(request.path.dropFirst("/files/".count)) : ""
        switch request.method {
        case "POST" where request.path == "/files" || request.path == "/files/":
            _ = try stream.read(exactly: length, until: nil)  // creation-with-upload is not offered: ignored
            guard let uploadLength = request.header("Upload-Length").flatMap({ Int($0) }), uploadLength >= 0 else {
                return try answer(request, 400)
            }
            let created = state.createUpload(length: uploadLength, metadata: Self.metadata(request.header("Upload-Metadata")))
            // Relative, as tusd sends it: the client resolves it against the creation URL.
            try answer(request, 201, ["Location": "/files/\(created)"])
        case "HEAD":
            guard let upload = state.upload(id) else { return try answer(request, 404) }
            try answer(request, 200, ["Upload-Offset": String(upload.data.count), "Upload-Length": String(upload.length), "Cache-Control": "no-store"])
        case "PATCH":
            try patch(request, id: id, length: length, fault: fault)
        default:
            _ = try stream.read(exactly: length, until: nil)
            try answer(request, 405)
        }
    }

    /// PATCH: Content-Type and Upload-Offset checked first (415, 409), then the body appended
    /// chunk by chunk as it arrives, so an interrupted request still moves the offset.
    private func patch(_ request: TusRequestHead, id: String, length: Int, fault: TusFault) throws {
        guard let upload = state.upload(id) else {
            _ = try stream.read(exactly: length, until: nil)
            return try answer(request, 404)
        }
        guard request.header("Content-Type") == "application/offset+octet-stream" else {
            _ = try stream.read(exactly: length, until: nil)
            return try answer(request, 415)
        }
        guard request.header("Upload-Offset").flatMap({ Int($0) }) == upload.data.count else {
            _ = try stream.read(exactly: length, until: nil)
            return try answer(request, 409)
        }
        guard upload.data.count + length <= upload.length else {
            _ = try stream.read(exactly: length, until: nil)
            return try answer(request, 413)
        }
        var limit = length
        switch fault {
        case .cutAfter(let bytes), .stallAfter(let bytes): limit = min(length, bytes)
        default: break
        }
        var kept = 0
        let started = ContinuousClock.now
        do {
            while kept < limit {
                if case .throttle = fault, peerHasClosed() { break }
                if stream.buffer.isEmpty, try stream.fill(until: nil) == 0 { break }
                let take = min(stream.buffer.count, limit - kept)
                guard state.append(stream.buffer[0..<take], to: id, at: upload.data.count + kept) else { break }
                _ = try stream.read(exactly: take, until: nil)  // consume what was appended
                kept += take
                if case .throttle(let rate) = fault, rate > 0 {
                    // Fall behind no more than the rate allows: sleep until the bytes so far are due.
                    let due = started + .milliseconds(Int64(kept) * 1000 / Int64(rate))
                    if due > ContinuousClock.now { try pause(until: due) }
                }
            }
        } catch {
            state.record(method: request.method, path: request.path, headers: request.headers, kept: kept, status: nil)
            throw error
        }
        switch fault {
        case .cutAfter where kept < length:
            state.record(method: request.method, path: request.path, headers: request.headers, kept: kept, status: nil)
            stream.resetAndClose()
            throw Abandon()
        case .stallAfter where kept < length:
            state.record(method: request.method, path: request.path, headers: request.headers, kept: kept, status: nil)
            try pause(until: nil)
            throw Abandon()
        default:
            break
        }
        guard kept == length else {
            // The client went away mid-body (killed, timed out): what arrived stays.
            state.record(method: request.method, path: request.path, headers: request.headers, kept: kept, status: nil)
            throw Abandon()
        }
        try answer(request, 204, ["Upload-Offset": String(upload.data.count + kept)], kept: kept)
    }

    private func answer(_ request: TusRequestHead, _ status: Int, _ headers: [String: String] = [:], kept: Int = 0) throws {
        var text = "HTTP/1.1 \(status) \(OriginConnection.reasonPhrase(status))\r\nTus-Resumable: 1.0.0\r\n"
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) { text += "\(name): \(value)\r\n" }
        // HEAD and 204 answers have no body and need no length; every other answer is empty.
        if request.method != "HEAD" && status != 204 { text += "Content-Length: 0\r\n" }
        text += "\r\n"
        state.record(method: request.method, path: request.path, headers: request.headers, kept: kept, status: status)
        try stream.write(Array(text.utf8), until: nil)
    }

    /// Waits until `deadline` (nil: until the client closes or the server stops), reading nothing.
    private func pause(until deadline: ContinuousClock.Instant?) throws {
        guard let deadline else {
            // Not reading: the client's bytes pile up in the socket buffers until it gives up.
            while true {
                // POLLRDHUP (see `peerHasClosed`): the client closed its side, which shows
                // without reading the bytes it had sent.
                var fds = [pollfd(fd: stream.fd, events: Int16(0x2000), revents: 0), pollfd(fd: state.listener.stopPipe.read, events: Int16(POLLIN), revents: 0)]
                let ready = poll(&fds, 2, -1)
                if ready < 0 && errno == EINTR { continue }
                throw Abandon()
            }
        }
        let remaining = ContinuousClock.now.duration(to: deadline)
        if remaining > .zero { Thread.sleep(forTimeInterval: Double(remaining.roundedUpMilliseconds) / 1000) }
    }

    /// Whether the client has closed its side (POLLRDHUP, 0x2000 on Linux, not exported to
    /// Swift). A throttled PATCH stops there: the bytes still queued in the kernel were in flight
    /// when the client died, and draining them slowly would race its restarted successor.
    private func peerHasClosed() -> Bool {
        var probe = pollfd(fd: stream.fd, events: Int16(0x2000), revents: 0)
        return poll(&probe, 1, 0) > 0
    }

    /// Upload-Metadata: comma-separated `key base64value` pairs (the value may be left out).
    static func metadata(_ header: String?) -> [String: String?] {
        var result: [String: String?] = [:]
        for pair in (header ?? "").split(separator: ",") {
            let parts = pair.trimmingCharacters(in: .whitespaces).split(separator: " ", maxSplits: 1)
            guard let key = parts.first else { continue }
            result[String(key)] = parts.count > 1 ? Data(base64Encoded: String(parts[1])).map { String(decoding: $0, as: UTF8.self) } : .some(nil)
        }
        return result
    }
}
