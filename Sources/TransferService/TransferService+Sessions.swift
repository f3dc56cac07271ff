internal import Synchronization
internal import FoundationEssentials
internal import JSONModel
public import TransferModel
internal import TransferStore
internal import TransferEngine
internal import Logging

extension TransferService {
    /// Creates a session, or reattaches to the background session with the same identifier
    /// (`created` is then false and the given configuration and webhook are ignored, as
    /// URLSession does). A background session's creator or reattacher gets an attachment
    /// (`TransferService+Attachments`); a reattach appends didFinishEvents after the backlog.
    public func createSession(_ request: SessionCreate, owner: String?) throws -> SessionCreation {
        if let webhook = request.webhook { try checkNetworkPolicy(webhookURL: webhook.url) }
        let (creation, written, deliveries) = try state.withLock { s throws -> (SessionCreation, Int?, Deliveries) in
            guard s.accepting else { throw ServiceError.shuttingDown }
            var deliveries = Deliveries()
            if request.kind == .background, let identifier = request.identifier,
               let existing = s.sessions.values.first(where: { $0.kind == .background && $0.identifier == identifier && $0.owner == owner && $0.state != .invalidated }) {
                let attachment = try attach(&s, session: existing.id)
                emitFinishEvents(&s, session: existing.id, &deliveries)
                return (SessionCreation(session: existing, created: false, attachment: attachment), nil, deliveries)
            }
            var session = Session(
                id: UUID().uuidString.lowercased(), kind: request.kind, identifier: request.identifier,
                description: request.description, state: .active, configuration: request.configuration,
                createdAt: Date(), version: 1, owner: owner)
            session.configuration.urlCache = urlCaches.resolve(session.configuration.urlCache, kind: session.kind)
            if let webhook = request.webhook {
                session.webhook = WebhookStatus(url: webhook.url, mode: webhook.mode)
            }
            s.sessions[session.id] = session
            // The row and its webhook secret in one call, so in one transaction: a creation is
            // committed whole or refused whole.
            var operations = [StoreOperation.saveSession(session)]
            if let webhook = request.webhook {
                operations.append(.saveWebhookSecret(sessionId: session.id, secret: webhook.secret))
            }
            let written = isRecorded(s, session: session.id) ? store.enqueue(operations) : nil
            s.sessionOrder.append(session.id)
            let attachment = request.kind == .background ? try attach(&s, session: session.id) : nil
            return (SessionCreation(session: session, created: true, attachment: attachment), written, deliveries)
        }
        guard creation.created else {
            // A reattach creates no row: its finish events are background writes, kept and
            // retried if the disk refuses them.
            store.flush()
            deliveries.run()
            return creation
        }
        try settleCreation(of: creation.session.id, written)
        if isClustered, creation.session.kind == .ephemeral { routeEphemeral(session: creation.session.id, tasks: []) }
        if !creation.session.configuration.tlsVerifiesServerCertificate {
            // Loud on purpose: this session's tasks accept any server certificate. Once, here;
            // each task names its session.
            logger.warning("session \(creation.session.id): TLS certificate verification is off (tlsVerifiesServerCertificate false)",
                           metadata: ["transfer.session.id": "\(creation.session.id)"])
        }
        if let webhook = request.webhook {
            // Only once the session is committed, so a refused one never posts.
            webhooks.register(session: creation.session.id, secret: webhook.secret)
        }
        deliveries.run()
        return creation
    }

    public func session(_ id: String, owner: String?) throws -> Session {
        try learnSession(id)
        return try state.withLock { s in try visibleSession(s, id, owner) }
    }

    func visibleSession(_ s: ServiceState, _ id: String, _ owner: String?) throws -> Session {
        guard let session = s.sessions[id], session.isVisible(to: owner) else {
            throw ServiceError.notFound("no session \(id)")
        }
        return session
    }

    /// A page of the sessions this client sees (of `kind` only, when given), in creation order.
    /// The cursor is the last id seen.
    public func listSessions(owner: String?, limit: Int, cursor: String?, kind: SessionKind? = nil) throws -> (items: [Session], next: String?) {
        try learnNewSessions()
        return try state.withLock { s in
            var start = 0
            if let cursor {
                guard let index = s.sessionOrder.firstIndex(of: cursor) else { throw ServiceError.invalidQuery("unknown cursor") }
                start = index + 1
            }
            let sessions = s.sessions  // shared, not copied: read only
            let listed = { (id: String) -> Session? in
                sessions[id].flatMap { $0.isVisible(to: owner) && (kind == nil || $0.kind == kind) ? $0 : nil }
            }
            var items: [Session] = []
            var index = start
            while index < s.sessionOrder.count, items.count < limit {
                if let session = listed(s.sessionOrder[index]) { items.append(session) }
                index += 1
            }
            let more = s.sessionOrder[index...].contains { listed($0) != nil }
            return (items, more ? items.last?.id : nil)
        }
    }

    /// finishTasksAndInvalidate (cancelTasks false) or invalidateAndCancel (true). The session
    /// accepts no new tasks; once its last task ends it is invalidated and didBecomeInvalid is sent.
    public func invalidate(session id: String, cancelTasks: Bool, owner: String?) throws -> Session {
        let (session, deliveries) = try state.withLock { s throws -> (Session, Deliveries) in
            var session = try visibleSession(s, id, owner)
            guard session.id != Session.sharedID else {
                throw ServiceError.conflict(code: "shared_session", message: "the shared session cannot be invalidated")
            }
            var deliveries = Deliveries()
            if session.state == .active {
                session.state = .invalidating
                saveSession(&s, session)
            }
            if cancelTasks {
                // Ids of tasks that left memory are in the list too: those completed.
                for taskId in s.tasksBySession[id] ?? [] where s.tasks[taskId].map({ $0.task.state != .completed }) == true {
                    cancel(&s, task: taskId, &deliveries)
                }
            }
            checkInvalidation(&s, session: id, &deliveries)
            return (s.sessions[id] ?? session, deliveries)
        }
        try commit(delivering: deliveries)
        if cancelTasks { try cancelElsewhere(session: id, owner: owner) }
        return session
    }

    /// Invalidates an invalidating session whose tasks have all ended. (In a cluster, the tasks
    /// of every node and of the queue count: the store is asked, off the lock.)
    func checkInvalidation(_ s: inout ServiceState, session id: String, _ deliveries: inout Deliveries) {
        guard let session = s.sessions[id], session.state == .invalidating else { return }
        let open = (s.tasksBySession[id] ?? []).contains { s.tasks[$0].map { $0.task.state != .completed } == true }
        guard !open else { return }
        if isClustered, isRecorded(s, session: id) {
            if let work = clusterWork { deliveries.add { [weak self] in self?.store.afterCommit { work.checkInvalidation(of: id) } } }
            return
        }
        finishInvalidation(&s, session: id, &deliveries)
    }

    /// Marks an invalidating session invalidated, tells its feed, and lets go of what it held.
    func finishInvalidation(_ s: inout ServiceState, session id: String, _ deliveries: inout Deliveries) {
        guard var session = s.sessions[id], session.state == .invalidating else { return }
        session.state = .invalidated
        session.invalidatedAt = Date()
        saveSession(&s, session)
        emit(&s, session: id, task: nil, .didBecomeInvalid, ["error": .null], &deliveries)
        letGoOfInvalidated(&s, session: s.sessions[id] ?? session, &deliveries)
    }

    /// What an invalidated session held beside its tasks goes: its attachment, its own connection
    /// pool, and an ephemeral session's cookies, cache and credentials (outside the lock).
    func letGoOfInvalidated(_ s: inout ServiceState, session: Session, _ deliveries: inout Deliveries) {
        let id = session.id
        for store in sessionScopedStores { store.discard(session: session) }
        s.attachments[id] = nil
        engine.submit(.forgetConnections(pool: Session.connectionPool(session: id, owner: nil)))
        let stores = sessionScopedStores
        let invalidated = s.sessions[id] ?? session
        deliveries.add { for store in stores { store.discard(session: invalidated) } }
    }
}

/// What `createSession` did: the session, whether it is new (201) or reattached (200), and the
/// attachment a background session's client polls with.
public struct SessionCreation: Sendable {
    public let session: Session
    public let created: Bool
    public let attachment: String?
}
