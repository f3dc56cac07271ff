internal import CMicroHTTPD
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

        let declared = head.contentLength ?? 0
        let refusal = declared > configuration.maxBodySize ? bodyTooLargeResponse : handler.preflight(head)
        guard let refusal else {
            // Reserve for the declared body, but not more than 1 MiB up front: a client can
            // declare a large body and send nothing.
            if declared > 0 { context.body.reserveCapacity(min(declared, 1 << 20)) }
            return .YES
        }
        if head.declaresBody {
            return MHDResponse.queue(refusal, on: connection, core: self)
        }
        context.earlyResponse = refusal
        return .YES
    }

    /// Call (2): keeps the chunk, or drops it once the request is refused or too large.
    func bodyReceived(_ context: RequestContext, bytes: UnsafeRawBufferPointer) {
        guard context.earlyResponse == nil, !context.bodyTooLarge else { return }
        if context.body.count + bytes.count > configuration.maxBodySize {
            context.bodyTooLarge = true
            context.body = Data()
        } else {
            context.body.append(contentsOf: bytes)
        }
    }

    /// Call (3), and every call after a resume: answers, or calls the handler.
    func requestReceived(_ context: RequestContext, connection: OpaquePointer) -> MHD_Result {
        if let responder = context.responder {
            let action = responder.resumedCallReached()
            if case .queue = action { suspendedCount.subtract(1, ordering: .relaxed) }
            return perform(action, for: context, connection: connection)
        }
        if let early = context.earlyResponse {
            return MHDResponse.queue(early, on: connection, core: self)
        }
        if context.bodyTooLarge {
            return MHDResponse.queue(bodyTooLargeResponse, on: connection, core: self)
        }
        let responder = Responder(resumer: ConnectionResumer(connection))
        guard admit(responder, id: context.head.id) else {
            return MHDResponse.queue(shuttingDownResponse, on: connection, core: self)
        }
        context.responder = responder
        let request = HTTPRequest(head: context.head, body: context.body)
        context.body = Data()
        handler.handle(request, responder: responder)
        return perform(responder.handlerReturned(), for: context, connection: connection)
    }

    /// The request is over (answered and sent, or its connection closed).
    func requestCompleted(_ context: RequestContext) {
        retire(id: context.head.id)
        inFlightCount.subtract(1, ordering: .relaxed)
    }

    /// Carries out what the responder's state machine decided, on the connection thread.
    private func perform(
        _ action: ResponderState.Action, for context: RequestContext, connection: OpaquePointer
    ) -> MHD_Result {
        guard let responder = context.responder else { return .YES }
        switch action {
        case .queue(let response):
            retire(id: context.head.id)
            return MHDResponse.queue(response, on: connection, core: self)
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
