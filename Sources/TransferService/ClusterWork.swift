internal import Dispatch
internal import Logging
internal import Synchronization
internal import TransferStore

/// Drives a cluster node's share of the queue (`TransferService+ClusterQueue`): claims when the
/// node has room (nudged when a task is made here, when a commit of any node changed the queue:
/// the `queue` signal, and every `claimInterval` in case a signal was missed), and every third
/// of the lease timeout renews the node's leases, takes expired ones back into the queue and
/// claims.
///
/// It also listens for the other nodes' signals (`ClusterCoordinator.listen`): changes wake the
/// long-polls held for the store (`waits`), a command for this node's task is carried out, an
/// answer wakes the request that waits for it.
///
/// Execution contexts: one serial queue, `transferd.cluster.work`. Every lease this node takes
/// (claims, and takes for a command, `onQueue`) and every renewal runs there, one at a time, so
/// a renewal never judges a lease taken while it ran. Each is a round trip to the database and
/// none holds the service's lock across one. The listener's thread (`transferd.cluster.listener`)
/// only wakes and hands over; commands from other nodes run on `transferd.cluster.commands`
/// (serial: they take leases through `onQueue`, so never on the work queue itself).
final class ClusterWork: Sendable {
    private let queue = DispatchQueue(label: "transferd.cluster.work")
    private let commandQueue = DispatchQueue(label: "transferd.cluster.commands")
    private let commandsDue = Atomic<Bool>(false)
    private let listener = Mutex<(any ClusterListening)?>(nil)
    /// Long-polls that wait for the store (a session's feed, other nodes' tasks).
    let waits = ClusterWaits()
    /// The commands this node passed to others, by id, each with what its answer's signal wakes.
    private let answers = Mutex<[Int: @Sendable () -> Void]>([:])
    private let node = Mutex<String?>(nil)
    private let nudged = Atomic<Bool>(false)
    private let claimTimer = HandOffTimer()
    private let leaseTimer = HandOffTimer()
    /// Whether the last round failed (logged once per failure run, not every round).
    private let failing = Atomic<Bool>(false)
    private let logger: Logger
    private let leaseTimeout: Double

    /// How often a node looks for tasks other nodes queued, when nothing nudged it.
    static let claimInterval = 0.5

    /// The leased downloads' partial files in the shared folder.
    let partials: LeasedPartials

    init(leaseTimeout: Double, dataDirectory: String, logger: Logger) {
        self.leaseTimeout = leaseTimeout
        self.logger = logger
        partials = LeasedPartials(dataDirectory: dataDirectory)
    }

    /// Starts as `node`: what the node held before a restart goes back to the queue first (its
    /// transfers ended with the process), then the rounds begin.
    func start(node id: String, service: TransferService) {
        node.withLock { $0 = id }
        listen(service, node: id)
        queue.async { [weak service] in
            guard let service, let coordinator = service.store.coordinator else { return }
            self.round("requeue this node's previous leases") { _ = try coordinator.requeueAll(of: id) }
            self.round("claim") { _ = try service.claimQueuedTasks(node: id) }
        }
        let claims = DispatchSource.makeTimerSource(queue: queue)
        claims.schedule(deadline: .now() + Self.claimInterval, repeating: Self.claimInterval)
        claims.setEventHandler { [weak self, weak service] in
            guard let self, let service else { return }
            claim(service, node: id)
        }
        claims.resume()
        claimTimer.set(claims)
        let leases = DispatchSource.makeTimerSource(queue: queue)
        let interval = max(1, leaseTimeout / 3)
        leases.schedule(deadline: .now() + interval, repeating: interval)
        leases.setEventHandler { [weak self, weak service] in
            guard let self, let service, let coordinator = service.store.coordinator else { return }
            round("renew leases") { _ = try service.renewLeases(node: id) }
            round("requeue expired leases") { _ = try coordinator.requeueExpired() }
            endSilentNodesSessions(coordinator)
            claim(service, node: id)
            carryOutCommands(service, node: id)  // one whose signal was missed
            round("webhooks behind") { try service.sweepWebhooks() }
            if listener.withLock({ $0 == nil }) { listen(service, node: id) }  // it could not start before
        }
        leases.resume()
        leaseTimer.set(leases)
        target.withLock { $0 = Weak(service) }
    }

    /// Whom `nudge` claims for.
    private let target = Mutex<Weak?>(nil)

    /// How long a nudge waits for others to share its claim: completions come in bursts (and
    /// each commit that frees a lease signals every node), and a claim per completion was most
    /// of the database's work per small file.
    static let nudgeWindow = 0.005

    /// A claim round soon (coalesced: the nudges of `nudgeWindow` make one round).
    func nudge() {
        guard let id = node.withLock({ $0 }), !nudged.exchange(true, ordering: .relaxed) else { return }
        queue.asyncAfter(deadline: .now() + Self.nudgeWindow) { [self] in
            nudged.store(false, ordering: .relaxed)
            guard let service = target.withLock({ $0?.value }) else { return }
            claim(service, node: id)
        }
    }

    /// Claims while the node has room and the queue gives (a full claim may leave more).
    private func claim(_ service: TransferService, node id: String) {
        for _ in 0..<8 {
            var took = 0
            round("claim") { took = try service.claimQueuedTasks(node: id) }
            guard took > 0, service.claimRoom > 0 else { return }
        }
    }

    /// Runs `body` on the queue, between rounds, with the node's id; throws when the node has not
    /// started (it has no id to take leases as).
    func onQueue<T: Sendable>(_ body: (String) throws -> T) throws -> T {
        guard let id = node.withLock({ $0 }) else { throw StoreReadFailure(reason: "this node has not joined its cluster yet") }
        return try queue.sync { try body(id) }
    }

    // MARK: signals

    private func listen(_ service: TransferService, node id: String) {
        guard let coordinator = service.store.coordinator else { return }
        do {
            let started = try coordinator.listen { [weak self, weak service] heard in
                guard let self else { return }
                waits.wake(heard)
                switch heard {
                case .resync:
                    // What was signalled meanwhile is lost: look at everything that waits.
                    for wake in answers.withLock({ Array($0.values) }) { wake() }
                    if let service { carryOutCommands(service, node: id) }
                    commandQueue.async { [weak service] in service?.settingChanged(nil) }
                    nudge()
                case .signals(let signals):
                    for signal in signals {
                        switch signal {
                        case .command(_, let target) where target == id:
                            if let service { carryOutCommands(service, node: id) }
                        case .answer(let command):
                            answers.withLock { $0[command] }?()
                        case .queue:
                            nudge()  // a task queued or a slot freed, on any node
                        case .session(let session):
                            commandQueue.async { [weak service] in
                                service?.sessionSignalled(session)
                                service?.learnWebhook(session)
                            }
                        case .feed(let session):
                            service?.nudgeWebhook(session)
                        case .setting(let name):
                            commandQueue.async { [weak service] in service?.settingChanged(name) }
                        case .task(let session, _), .tasks(let session):
                            // A task of an invalidating session ended, maybe its last.
                            if service?.isInvalidating(session: session) == true { checkInvalidation(of: session) }
                        default:
                            break
                        }
                    }
                }
            }
            listener.withLock { $0 = started }
        } catch {
            // Long-polls then answer at their deadline, and commands wait for the lease round,
            // which tries to listen again.
            logger.error("cannot listen for the other nodes' changes", metadata: ["error": "\(error)"])
        }
    }

    /// Carries out the commands other nodes wrote for this node (coalesced, one run at a time).
    private func carryOutCommands(_ service: TransferService, node id: String) {
        guard !commandsDue.exchange(true, ordering: .relaxed) else { return }
        commandQueue.async { [weak service, self] in
            commandsDue.store(false, ordering: .relaxed)
            service?.carryOutForwardedCommands(node: id)
        }
    }

    /// Sessions whose invalidation is to be checked soon (coalesced per session).
    private let invalidationChecks = Mutex<Set<String>>([])

    /// Soon asks whether invalidating session `id` has no unfinished task left anywhere.
    func checkInvalidation(of id: String) {
        guard invalidationChecks.withLock({ $0.insert(id).inserted }) else { return }
        commandQueue.asyncAfter(deadline: .now() + Self.nudgeWindow) { [self] in
            _ = invalidationChecks.withLock { $0.remove(id) }
            target.withLock { $0?.value }?.finishClusterInvalidation(of: id)
        }
    }

    /// Registers a command this node passed on; its answer's signal (or a resync) calls `wake`.
    func expectAnswer(_ command: Int, wake: @escaping @Sendable () -> Void) {
        answers.withLock { $0[command] = wake }
    }

    /// How many passed-on commands wait for their answer.
    var awaitedAnswers: Int { answers.withLock { $0.count } }

    /// Where the waits for passed-on commands' answers read the store (never an HTTP thread).
    let answerQueue = DispatchQueue(label: "transferd.cluster.answers", attributes: .concurrent)

    func forgetAnswer(_ command: Int) {
        _ = answers.withLock { $0.removeValue(forKey: command) }
    }

    /// Stops the rounds and gives every lease back to the queue, for the other nodes (after
    /// the last checkpoint is committed: they continue from it). Idempotent.
    func stop(store: any TaskStore) {
        claimTimer.cancel()
        leaseTimer.cancel()
        listener.withLock { let l = $0; $0 = nil; return l }?.stop()
        waits.wakeAll()
        guard let id = node.withLock({ let id = $0; $0 = nil; return id }) else { return }
        queue.sync {
            round("give leases back") { _ = try store.coordinator?.requeueAll(of: id) }
        }
    }

    /// Whether the last try to end silent nodes' sessions failed (logged once per failure run:
    /// a role the server does not let end others' sessions fails every round, and must not
    /// make the other steps' failure log flap).
    private let endingFails = Atomic<Bool>(false)

    /// Frees what a frozen node holds outside a transaction (`ClusterCoordinator.endSessions`).
    private func endSilentNodesSessions(_ coordinator: any ClusterCoordinator) {
        do {
            let ended = try coordinator.endSessions(ofNodesSilentFor: leaseTimeout)
            if ended > 0 { logger.warning("ended the database sessions of a silent node", metadata: ["sessions": "\(ended)"]) }
            endingFails.store(false, ordering: .relaxed)
        } catch {
            if !endingFails.exchange(true, ordering: .relaxed) {
                logger.warning("could not end a silent node's database sessions", metadata: ["error": "\(error)"])
            }
        }
    }

    private func round(_ what: String, _ body: () throws -> Void) {
        do {
            try body()
            if failing.exchange(false, ordering: .relaxed) { logger.info("cluster work goes on again", metadata: ["after": "\(what)"]) }
        } catch {
            if !failing.exchange(true, ordering: .relaxed) {
                logger.warning("cluster work failed", metadata: ["step": "\(what)", "error": "\(error)"])
            }
        }
    }

    /// The service, held weakly: it owns this.
    private struct Weak: Sendable {
        weak var value: TransferService?
        init(_ value: TransferService) { self.value = value }
    }
}
