internal import FoundationEssentials
internal import JSONModel
internal import Logging
internal import Synchronization
internal import TransferModel
internal import TransferStore

/// Sessions in a cluster. A session's row is the store's; each node that serves it keeps a copy
/// in memory, read again when a commit of any node changed the row (the `session` signal), so a
/// configuration change or an invalidation made through one node holds on all of them.
///
/// Invalidation spans the nodes: `invalidateAndCancel` through one node cancels the session's
/// tasks wherever they are (a queued one here, a running one through its holder), and the
/// session becomes invalidated once no node and no queue has an unfinished task of it: asked of
/// the store after a commit that may have ended its last one, by any node that knows the
/// session is invalidating; the row's own state decides which node announces didBecomeInvalid.
extension TransferService {
    /// In a cluster, learns the sessions other nodes stored since the last list, so that a list
    /// through any node shows a session made through another a moment ago. (A session whose
    /// creation committed after a later-numbered one is learned from its signal, or when its id
    /// is asked for.) Throws when the store cannot be read.
    func learnNewSessions() throws {
        guard let coordinator = store.coordinator else { return }
        while true {
            let mark = state.withLock { $0.learnedSessionsThrough }
            let page: (sessions: [Session], mark: Int)
            do {
                page = try coordinator.sessions(createdAfter: mark, limit: 1_000)
            } catch {
                throw StoreReadFailure(reason: "the sessions cannot be read: \(error)")
            }
            state.withLock { s in
                for session in page.sessions { know(&s, session) }
                s.learnedSessionsThrough = max(s.learnedSessionsThrough, page.mark)
            }
            if page.sessions.count < 1_000 { return }
        }
    }

    /// What a session's signal asks of this node: learn the session when it is new here (made
    /// on another node), else read it again (`refreshSession`). One read of its row either way.
    func sessionSignalled(_ id: String) {
        guard store.coordinator != nil else { return }
        guard state.withLock({ $0.sessions[id] == nil }) else { return refreshSession(id) }
        do {
            try learnSession(id)
        } catch {
            logger.warning("a session another node made cannot be read", metadata: ["transfer.session.id": "\(id)", "error": "\(error)"])
        }
    }

    /// Reads session `id` again when this node holds it and the store has a newer version.
    func refreshSession(_ id: String) {
        guard let coordinator = store.coordinator, state.withLock({ $0.sessions[id] != nil }) else { return }
        let stored: Session?
        do {
            stored = try coordinator.sessions(ids: [id]).first
        } catch {
            logger.warning("a session another node changed cannot be read", metadata: ["transfer.session.id": "\(id)", "error": "\(error)"])
            return
        }
        guard let stored else { return }
        let deliveries = state.withLock { s -> Deliveries in
            var deliveries = Deliveries()
            guard let held = s.sessions[id], stored.version > held.version else { return deliveries }
            var session = stored
            session.configuration.urlCache = urlCaches.resolve(session.configuration.urlCache, kind: session.kind)
            s.sessions[id] = session
            if session.state == .invalidated, held.state != .invalidated { letGoOfInvalidated(&s, session: session, &deliveries) }
            return deliveries
        }
        deliveries.run()
    }

    /// Whether this node's copy of session `id` is invalidating (its tasks' commits may end it).
    func isInvalidating(session id: String) -> Bool {
        state.withLock { $0.sessions[id]?.state == .invalidating }
    }

    /// Marks session `id` invalidated when it is invalidating and the store has no unfinished
    /// task of it. The row is written at once, only while it is still invalidating, so of nodes
    /// that get here together one marks it and tells the feed; the others read it again.
    func finishClusterInvalidation(of id: String) {
        guard let coordinator = store.coordinator else { return }
        do {
            guard try coordinator.unfinishedTaskCount(session: id) == 0 else { return }
            refreshSession(id)  // this node's copy at least as new as the store's
            let ended = state.withLock { s -> Session? in
                guard var session = s.sessions[id], session.state == .invalidating else { return nil }
                session.state = .invalidated
                session.invalidatedAt = Date()
                session.version += 1
                return session
            }
            guard let ended else { return }
            guard try coordinator.finishInvalidation(of: ended) else { return refreshSession(id) }  // another node did
            let deliveries = state.withLock { s in
                var deliveries = Deliveries()
                s.sessions[id] = ended
                emit(&s, session: id, task: nil, .didBecomeInvalid, ["error": .null], &deliveries)
                letGoOfInvalidated(&s, session: ended, &deliveries)
                return deliveries
            }
            deliveries.run()
        } catch {
            logger.warning("a session's invalidation cannot be ended now", metadata: ["transfer.session.id": "\(id)", "error": "\(error)"])
        }
    }

    /// invalidateAndCancel's cancels of the session's tasks this node does not hold: queued ones
    /// are taken here and cancelled, running ones are cancelled by their holders.
    func cancelElsewhere(session id: String, owner: String?) throws {
        guard let coordinator = store.coordinator else { return }
        let page = 500
        var after = 0
        while true {
            let rows = try coordinator.tasks(session: id, after: after, limit: page)
            for row in rows where row.state != .completed && row.isVisible(to: owner) && state.withLock({ !$0.tasks.contains(row.id) }) {
                do {
                    _ = try carryOut(.cancel(produceResumeData: false), task: row.id, owner: owner, forwarding: true)
                } catch let forwarded as CommandForwarded {
                    // Its holder cancels it, and the session ends once it has. Not waited for
                    // here: a holder that does not answer would hold this request a lease
                    // timeout per task.
                    forwarded.answer { [logger] result in
                        if case .failure(let error) = result {
                            logger.warning("a task of an invalidated session could not be cancelled", metadata: ["task": "\(row.id)", "error": "\(error)"])
                        }
                    }
                } catch {
                    logger.warning("a task of an invalidated session could not be cancelled", metadata: ["task": "\(row.id)", "error": "\(error)"])
                }
            }
            guard rows.count == page, let last = rows.last?.id else { break }
            after = last
        }
    }
}
