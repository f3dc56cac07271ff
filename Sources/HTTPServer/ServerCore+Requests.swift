internal import CMicroHTTPD
internal import Glibc
internal import Synchronization
import FoundationEssentials

/// The steps of one request through the access handler, called from `MHDCallbacks` on the
/// connection's pool thread. They return libmicrohttpd's verdict for that call.
///
/// libmicrohttpd 0.9.75 calls the access handler (1) once the head is parsed, (2) once per
/// body chunk and (3) once the body is complete, then again after each resume. A response
/// may be queued only in calls (1) and (3); one queued in (1) makes it skip the body and
/// close the connection afterwards, so only refusals of requests with a body answer there.
/// - SeeAlso: https://www.gnu.org/software/libmicrohttpd/manual/html_node/microhttpd_002dcb.html
extension ServerCore {
    /// Call (1): sets up the request's context in `slot`; refuses early if asked to.
    func requestStarted(
        connection: OpaquePointer, url: UnsafePointer<CChar>?, method: UnsafePointer<CChar>?,
        slot: UnsafeMutablePointer<UnsafeMutableRawPointer?>
    ) -> MHD_Result {
        let head = HTTPRequestHead(id: nextRequestID(), connection: connection, url: url, method: method)
        let context = RequestContext(head: head)
        slot.pointee = Unmanaged.passRetained(context).toOpaque()
        inFlightCount.add(1, ordering: .relaxed)

        if let problem = head.framingProblem {
            // Answered at once and the connection closed: what follows on it cannot be framed.
            var refusal = errorResponse(problem.status, problem.code, problem.message)
            refusal.headers.replaceOrAdd(name: "Connection", value: "close")
            if head.declaresBody { return MHDResponse.queue(refusal, on: connection, method: head.method, core: self) }
            context.earlyResponse = refusal
            return .YES
        }
        let declared = head.contentLength ?? 0
        let sink = handler.bodySink(for: head)
        context.bodyLimit = sink?.maxBodySize ?? configuration.maxBodySize
        let refusal = declared > context.bodyLimit ? bodyTooLargeResponse(limit: context.bodyLimit) : handler.preflight(head)
        guard let refusal else {
            if let sink {
                context.sink = sink
            } else if declared > 0 {
                // Reserve for the declared body, but not more than 1 MiB up front: a client can
                // declare a large body and send nothing.
                context.body.reserveCapacity(min(declared, 1 << 20))
            }
            return .YES
        }
        sink?.abandon()
        if head.declaresBody {
            return MHDResponse.queue(refusal, on: connection, method: head.method, core: self)
        }
        context.earlyResponse = refusal
        return .YES
    }

    /// Call (2): keeps the chunk (in memory or in the sink), or drops it once the request is
    /// refused, too large, or its sink stopped. Returns false when the client has gone with
    /// the body incomplete: the access handler then answers MHD_NO, which closes the connection.
    func bodyReceived(_ context: RequestContext, bytes: UnsafeRawBufferPointer, connection: OpaquePointer) -> Bool {
        context.received += bytes.count
        keep(bytes, for: context)
        return !clientClosedMidBody(context, connection: connection)
    }

    private func keep(_ bytes: UnsafeRawBufferPointer, for context: RequestContext) {
        guard context.earlyResponse == nil, !context.bodyTooLarge else { return }
        if let sink = context.sink {
            guard !context.sinkStopped else { return }
            if context.received > context.bodyLimit {
                // Abandoned now, not when the client has sent the rest: the partial data goes at once.
                context.bodyTooLarge = true
                context.sink = nil
                sink.abandon()
            } else if !sink.write(bytes.bytes) {
                context.sinkStopped = true
            }
        } else if context.body.count + bytes.count > configuration.maxBodySize {
            context.bodyTooLarge = true
            context.body = Data()
        } else {
            context.body.append(contentsOf: bytes)
        }
    }

    /// Whether the client closed its side although the declared body is incomplete.
    ///
    /// libmicrohttpd 0.9.75 can miss such a close under epoll: a short recv clears the
    /// connection's read-ready flag (`recv_param_adapter` in connection.c), so a FIN that came
    /// with the last bytes, before epoll reported them, raises no new event and the connection
    /// waits in CLOSE_WAIT for the idle timeout, with a streamed body's sink and partial file.
    /// Measured here: about one aborted upload in two under load. A non-consuming peek after
    /// each chunk sees the FIN. Only with a Content-Length: each call passes everything
    /// libmicrohttpd has buffered, so an incomplete body at end of stream can never complete
    /// (a chunked body's terminator is not counted, so its client's half-close is left alone).
    /// - SeeAlso: https://man7.org/linux/man-pages/man2/recv.2.html (MSG_PEEK: 0 means end of stream)
    private func clientClosedMidBody(_ context: RequestContext, connection: OpaquePointer) -> Bool {
        guard let declared = context.head.contentLength, context.received < declared,
              let info = mhd_get_connection_info(connection, .CONNECTION_INFO_CONNECTION_FD) else { return false }
        var byte: UInt8 = 0
        return recv(info.pointee.connect_fd, &byte, 1, Int32(MSG_PEEK) | Int32(MSG_DONTWAIT)) == 0
    }

    /// Call (3), and every call after a resume: answers, or calls the handler.
    func requestReceived(_ context: RequestContext, connection: OpaquePointer) -> MHD_Result {
        if let responder = context.responder {
            let action = responder.resumedCallReached()
            if case .queue = action { suspendedCount.subtract(1, ordering: .relaxed) }
            return perform(action, for: context, connection: connection)
        }
        if let early = context.earlyResponse {
            return MHDResponse.queue(early, on: connection, method: context.head.method, core: self)
        }
        if context.bodyTooLarge {
            return MHDResponse.queue(bodyTooLargeResponse(limit: context.bodyLimit), on: connection, method: context.head.method, core: self)
        }
        let responder = Responder(resumer: ConnectionResumer(connection))
        guard admit(responder, id: context.head.id) else {
            abandonSink(of: context)
            return MHDResponse.queue(shuttingDownResponse, on: connection, method: context.head.method, core: self)
        }
        var streamedBody: (any Sendable)?
        if let sink = context.sink {
            context.sink = nil
            switch sink.finish() {
            case .success(let product):
                streamedBody = product
            case .failure(let refusal):
                retire(id: context.head.id)
                return MHDResponse.queue(refusal.response, on: connection, method: context.head.method, core: self)
            }
        }
        context.responder = responder
        let request = HTTPRequest(head: context.head, body: context.body, streamedBody: streamedBody)
        context.body = Data()
        handler.handle(request, responder: responder)
        return perform(responder.handlerReturned(), for: context, connection: connection)
    }

    /// The request is over (answered and sent, or its connection closed); a sink not finished
    /// by now (client gone mid-body, server stopping) is abandoned.
    func requestCompleted(_ context: RequestContext) {
        abandonSink(of: context)
        retire(id: context.head.id)
        inFlightCount.subtract(1, ordering: .relaxed)
    }

    /// Abandons the request's sink if it still has one; the nil left behind makes it once only.
    private func abandonSink(of context: RequestContext) {
        guard let sink = context.sink else { return }
        context.sink = nil
        sink.abandon()
    }

    /// Carries out what the responder's state machine decided, on the connection thread.
    private func perform(
        _ action: ResponderState.Action, for context: RequestContext, connection: OpaquePointer
    ) -> MHD_Result {
        guard let responder = context.responder else { return .YES }
        switch action {
        case .queue(let response):
            retire(id: context.head.id)
            return MHDResponse.queue(response, on: connection, method: context.head.method, core: self)
        case .suspend:
            // Must run on this thread, inside the access handler (0.9.75 asserts it).
            MHD_suspend_connection(connection)
            suspendedCount.add(1, ordering: .relaxed)
            if case .resume = responder.suspendCompleted() {
                responder.resumeConnection()
            }
            return .YES
        case .none, .ignored, .resume:
            return .YES
        }
    }
}
