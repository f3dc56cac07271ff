internal import FoundationEssentials
internal import Synchronization
internal import JSONModel
internal import TransferModel
internal import TransferEngine

extension TransferService {
    /// Under the lock: issues a new attachment to the client creating or reattaching background
    /// session `id`, replacing one that lapsed or was never claimed. While another client's
    /// attachment is live, refuses as URLSession does a second process
    /// (backgroundSessionInUseByAnotherProcess, -996).
    func attach(_ s: inout ServiceState, session id: String) throws -> String {
        let now = EngineLoop.now()
        if let current = s.attachments[id], current.isLive(now: now, lease: configuration.attachmentLease) {
            let left = Int((configuration.attachmentLease - (now - current.lastSeen)).rounded(.up))
            throw ServiceError.backgroundSessionInUse(
                "background session \(id) is attached to another client (it polls the events feed with its attachment); "
                    + "retry once that client detaches or stops polling for \(Int(configuration.attachmentLease)) s (about \(max(0, left)) s from now)")
        }
        let attachment = Attachment(id: UUID().uuidString.lowercased(), lastSeen: now)
        s.attachments[id] = attachment
        return attachment.id
    }

    /// An events poll carried `attachment`: it becomes (or stays) the session's live attachment.
    /// One the session no longer has (another client reattached, or the daemon restarted) is
    /// refused with 409 `not_attached`.
    public func keepAttached(session id: String, attachment: String, owner: String?) throws {
        try state.withLock { s in
            let session = try visibleSession(s, id, owner)
            guard session.kind == .background else {
                throw ServiceError.conflict(code: "not_background", message: "session \(id) is a \(session.kind.rawValue) session; only background sessions have attachments")
            }
            guard var current = s.attachments[id], current.id == attachment else {
                throw ServiceError.conflict(code: "not_attached", message: "attachment \(attachment.prefix(64)) is not the live attachment of session \(id): reattach with POST /v1/sessions and the session's identifier")
            }
            current.claimed = true
            current.lastSeen = EngineLoop.now()
            s.attachments[id] = current
        }
    }

    /// `DELETE /v1/sessions/{sid}/attachment`: the client lets the session go at once, so
    /// another may attach without waiting for the lease to run out.
    public func detach(session id: String, attachment: String, owner: String?) throws {
        try state.withLock { s in
            let session = try visibleSession(s, id, owner)
            guard session.kind == .background else {
                throw ServiceError.conflict(code: "not_background", message: "session \(id) is a \(session.kind.rawValue) session; only background sessions have attachments")
            }
            guard s.attachments[id]?.id == attachment else {
                throw ServiceError.conflict(code: "not_attached", message: "attachment \(attachment.prefix(64)) is not the live attachment of session \(id)")
            }
            s.attachments[id] = nil
        }
    }

    /// Under the lock, at a reattach: appends didFinishEvents right after the events the client
    /// has not acknowledged, so reading the feed from its acknowledged cursor replays them and
    /// then meets it (at once when nothing was pending). Events that happen later follow it.
    func emitFinishEvents(_ s: inout ServiceState, session id: String, _ deliveries: inout Deliveries) {
        let acknowledged = s.sessions[id]?.acknowledgedEventSeq ?? 0
        let log = s.events[id]
        let backlog = log?.count(after: acknowledged) ?? 0
        let through = max(acknowledged, log?.lastSeq ?? 0)
        emit(&s, session: id, task: nil, .didFinishEvents, [
            "backlog": .integer(Int64(backlog)), "acknowledgedThrough": .integer(Int64(acknowledged)),
            "backlogThrough": .integer(Int64(through)),
        ], &deliveries)
    }
}
