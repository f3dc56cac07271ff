internal import Synchronization
public import TransferModel
internal import TransferStore

extension TransferService {
    /// The client has processed the session's events up to and including `seq`: they are
    /// deleted (memory and store), and a reattach replays only what follows. Acknowledging
    /// less than before changes nothing. Answers once the acknowledgement is durable.
    public func acknowledgeEvents(session id: String, through seq: Int, owner: String?) throws -> Session {
        try learnSession(id)
        // In a cluster the feed is the store's (every node's events, numbered as committed).
        let storedNewest = feedIsShared(session: id) ? try store.coordinator?.newestEventSeq(session: id) ?? 0 : 0
        let session = try state.withLock { s throws -> Session in
            var session = try visibleSession(s, id, owner)
            guard session.id != Session.sharedID else {
                // Every client's tasks share its feed: one client's acknowledgement would delete
                // the others' events.
                throw ServiceError.conflict(code: "shared_session", message: "the shared session's feed is shared by every client and cannot be acknowledged")
            }
            let newest = max(session.acknowledgedEventSeq, s.events[id]?.lastSeq ?? 0, storedNewest)
            guard seq <= newest else {
                throw InputError.invalidValue(field: "through", message: "is beyond the session's newest event (\(newest))")
            }
            guard seq > session.acknowledgedEventSeq else { return session }
            session.acknowledgedEventSeq = seq
            saveSession(&s, session)
            s.events[id]?.drop(through: seq)
            record(s, session: id, .deleteEvents(sessionId: id, through: seq))
            return s.sessions[id] ?? session
        }
        try store.commit()
        return session
    }
}
