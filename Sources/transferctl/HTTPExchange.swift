internal import Curl
internal import Glibc

/// Where a successful answer's body goes instead of memory (a file being fetched).
protocol ResponseSink: AnyObject {
    /// Takes the next bytes; false stops the transfer (the sink keeps its own error).
    func write(_ bytes: UnsafeRawBufferPointer) -> Bool
}

/// One request's side of libcurl's callbacks: collects the last header block and the body (or
/// streams a 2xx body to a sink), feeds an upload from a file, and stops on Ctrl-C. Owned by
/// `APIClient.send` for the length of one `perform()`, on the calling thread (not Sendable).
final class HTTPExchange: EasyHandleDelegate {
    private(set) var headerLines: [String] = []
    private(set) var body: [UInt8] = []
    private let sink: (any ResponseSink)?
    private let source: InputFile?

    init(sink: (any ResponseSink)?, source: InputFile?) {
        self.sink = sink
        self.source = source
    }

    func easyHandle(_ handle: EasyHandle, didReceiveHeaderLine line: String) -> Bool {
        // Keep only the final response's block (a 100 Continue comes first).
        if line.hasPrefix("HTTP/") { headerLines = [] }
        if !line.isEmpty { headerLines.append(line) }
        return true
    }

    func easyHandle(_ handle: EasyHandle, didReceive bytes: RawSpan) -> WriteDisposition {
        bytes.withUnsafeBytes { raw in
            // An error answer's JSON is kept in memory to report it, never written to the file.
            if let sink, (200..<300).contains(handle.responseCode) {
                return sink.write(raw) ? .accept : .fail
            }
            body.append(contentsOf: raw)
            return .accept
        }
    }

    func easyHandle(_ handle: EasyHandle, progress: TransferCounters) -> Bool { !Interrupt.isRequested }

    func easyHandle(_ handle: EasyHandle, fill buffer: inout MutableRawSpan) -> ReadDisposition {
        guard let source else { return .filled(0) }
        guard let count = source.read(into: &buffer) else { return .abort }
        return .filled(count)
    }

    func easyHandle(_ handle: EasyHandle, rewindBodyTo offset: Int) -> Bool {
        source?.seek(to: offset) ?? false
    }
}
