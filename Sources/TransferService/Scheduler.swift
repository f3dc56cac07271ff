internal import FoundationEssentials
internal import HeapModule
internal import TransferModel

/// Admission of queued tasks to the engine (docs/scheduling.md).
///
/// Caps: a global cap on running transfers, an optional cap per session, and a cap per host
/// (httpMaximumConnectionsPerHost of the task's session). Order: class first (interactive,
/// streaming, default, background), then higher priority, then arrival; discretionary tasks only
/// when nothing else waits and their window is open. When the global cap is full, a queued task of
/// an earlier class than background takes the slot of a running preemptible background transfer.
///
/// Every operation is O(log n) in the number of queued tasks: the queue is a heap with lazy
/// deletion (a removed or re-prioritised task leaves a stale key behind, skipped when it surfaces),
/// and a task whose host or session is full waits in that host's or session's own heap, one of
/// which goes back to the main heap each time a slot there frees. A value type with no I/O.
///
/// A running task may want more connections than its one (a segmented download's, on its
/// host and its mirrors' hosts: `wantConnections`). Each counts against the per-host cap of the
/// host it goes to and is granted (`Decision.grant`) in admission order: a queued task bound
/// for that host with an earlier key is admitted first, one with a later key waits behind the
/// grant. Extra connections do not count against the global and per-session caps, which count
/// tasks. A discretionary task's wants wait while discretionary tasks may not start.
///
/// A running task whose transfer ended (`transferEnded`) while its completion is still being
/// recorded holds no connection and no transfer: its host slot and its place under the global
/// cap go to the next task at once. It keeps its place under its session's cap, which counts
/// tasks, until it is removed.
struct Scheduler: Sendable {
    /// What the scheduler needs to know of a task to queue it.
    struct Ticket: Sendable, Equatable {
        var taskId: Int
        var schedulingClass: SchedulingClass = .default
        var priority: Double = 0.5
        var host: String
        var hostLimit: Int = 6
        var session: String = ""
        var sessionLimit: Int? = nil
        /// From an isDiscretionary session: runs only when nothing else waits.
        var discretionary = false
        /// Can give its slot back without losing bytes (a background download).
        var preemptible = false
        /// Who sees it in the queue besides admins: the task's owner, else its session's; nil
        /// for everyone (`GET /v1/queue`).
        var audience: String? = nil
    }

    /// What `admit` decided, in order.
    enum Decision: Sendable, Equatable {
        case start(Int)
        /// Stop this running transfer and queue it again; its slot went to a higher class.
        case preempt(Int)
        /// One more connection to `host` (a host key) for this running task.
        case grant(Int, host: String)
    }

    /// A queued task as listed (`GET /v1/queue`).
    struct QueuedTask: Sendable, Equatable {
        let taskId: Int
        let schedulingClass: SchedulingClass
        let priority: Double
        let discretionary: Bool
        /// Why it is not running yet.
        let blockedBy: Blocker
        /// Its place in admission order: sort by this.
        let key: Key
    }

    enum Blocker: String, Sendable {
        case globalCap, hostCap, sessionCap, discretionary
    }

    /// The heap's sort key: smaller is admitted first.
    struct Key: Comparable, Sendable {
        let discretionary: Bool
        /// The class's rank (`SchedulingClass.rank`, 0-3): one byte, so a key is 32 bytes.
        let rank: Int8
        let priority: Double
        let order: Int
        let taskId: Int

        static func < (a: Key, b: Key) -> Bool {
            if a.discretionary != b.discretionary { return !a.discretionary }
            if a.rank != b.rank { return a.rank < b.rank }
            if a.priority != b.priority { return a.priority > b.priority }
            return a.order < b.order
        }

        static func == (a: Key, b: Key) -> Bool { a.taskId == b.taskId && a.order == b.order && a.priority == b.priority }
    }

    /// What is kept of a queued task's ticket: 40 bytes, where the whole ticket and its key took
    /// 128 and the ticket's host key a string of its own (100,000 queued tasks: about 0.5 KiB a
    /// task, docs/benchmarks.md). The task id is the `queued` table's key; host and session are
    /// interned.
    private struct Queued: Sendable {
        var priority: Double
        /// Its arrival: with the id and priority, what tells a current heap key from a stale one.
        let order: Int
        let host: Int32
        /// The session's number in `sessionNames`.
        let session: Int32
        let hostLimit: Int32
        /// -1: the session has no cap.
        let sessionLimit: Int32
        let schedulingClass: SchedulingClass
        let discretionary: Bool
        let preemptible: Bool
        /// The audience's number in `audienceNames`; `everyone` when it has none.
        let audience: Int32

        init(_ ticket: Ticket, order: Int, host: Int, session: Int32, audience: Int32) {
            priority = ticket.priority
            self.session = session
            self.order = order
            self.host = Int32(host)
            hostLimit = Int32(clamping: ticket.hostLimit)
            sessionLimit = ticket.sessionLimit.map { Int32(clamping: max(0, $0)) } ?? -1
            schedulingClass = ticket.schedulingClass
            discretionary = ticket.discretionary
            preemptible = ticket.preemptible
            self.audience = audience
        }

        func key(taskId: Int) -> Key {
            Key(discretionary: discretionary, rank: Int8(schedulingClass.rank), priority: priority, order: order, taskId: taskId)
        }

        var hostId: Int { Int(host) }
        var sessionCap: Int? { sessionLimit < 0 ? nil : Int(sessionLimit) }
    }

    private struct Running: Sendable {
        /// Its queued entry: with its arrival order, which places its connection wants among
        /// queued tasks.
        var entry: Queued
        let taskId: Int
        let started: Int
        /// Its transfer ended (`transferEnded`): only its session slot is still held.
        var ended = false
    }

    var maxConcurrent: Int
    /// Whether discretionary tasks may start now (their time window is open); the service sets it.
    var discretionaryWindowOpen = true

    private var heap = Heap<Key>()
    /// The queued tasks in admission order, per audience: what `listing` reads, a page at a time.
    private var listed: [Int32: OrderedKeys<Key>] = [:]
    /// Audiences (owners) interned like sessions; `everyone` stands for none. An audience goes
    /// when its last queued task does.
    private var audienceNumbers: [String: Int32] = [:]
    private var audienceNames: [Int32: String] = [:]
    private var nextAudienceNumber: Int32 = 0
    private static let everyone: Int32 = -1
    private var parkedByHost: [Int: Heap<Key>] = [:]
    private var parkedBySession: [String: Heap<Key>] = [:]
    /// Hosts and sessions that may have room for tasks parked on them (a slot freed, or a task
    /// bound for them left the queue): `admit` moves that many parked tasks back first.
    private var hostsToRefill: Set<Int> = []
    private var sessionsToRefill: Set<String> = []
    private var hostLimits: [Int: Int] = [:]
    private var sessionLimits: [String: Int] = [:]
    private var queued: [Int: Queued] = [:]
    private var running: [Int: Running] = [:]
    /// How many of `running` have ended their transfer (`transferEnded`).
    private var ended = 0
    private var perHost: [Int: Int] = [:]
    private var perSession: [String: Int] = [:]
    /// Host keys interned to small integers: 100,000 queued tasks to one origin share one string.
    private var hostIds: [String: Int] = [:]
    private var hostNames: [Int: String] = [:]
    private var nextHostId = 0
    /// Session ids interned likewise, for the queued entries.
    private var sessionNumbers: [String: Int32] = [:]
    private var sessionNames: [Int32: String] = [:]
    private var nextSessionNumber: Int32 = 0
    /// Queued and running tasks per host and per session: what a host or session keeps in here
    /// (its id, limit, parked heap) goes when its last task leaves, so a daemon that has seen a
    /// million origins does not keep a million entries.
    private var hostUsers: [Int: Int] = [:]
    private var sessionUsers: [String: Int] = [:]
    private var order = 0
    private var startOrder = 0
    private(set) var queuedByClass: [SchedulingClass: Int] = [:]
    private(set) var runningByClass: [SchedulingClass: Int] = [:]
    private var queuedNotDiscretionary = 0
    /// Running tasks' wants for more connections, and what each was granted.
    private var connectionWants = ConnectionWants()

    init(maxConcurrent: Int) { self.maxConcurrent = max(1, maxConcurrent) }

    /// The key transfers share a connection limit under: session and origin.
    static func hostKey(sessionId: String, url: String) -> String {
        let origin = RequestURL.origin(of: url) ?? url
        return sessionId + " " + origin
    }

    /// The origin a host key of `sessionId` names (`hostKey` backwards).
    static func origin(ofHostKey key: String, sessionId: String) -> String {
        String(key.dropFirst(sessionId.count + 1))
    }

    var queuedCount: Int { queued.count }
    /// Running transfers: what the global cap counts (tasks whose transfer ended are not).
    var runningCount: Int { running.count - ended }

    /// The running background transfers a queued task of an earlier class could take the slot
    /// of, less the queued tasks of earlier classes here that would take them first. A full
    /// cluster node claims that many such tasks from the store's queue (`claimQueuedTasks`).
    var preemptibleSlots: Int {
        let victims = running.values.count { !$0.ended && $0.entry.preemptible && $0.entry.schedulingClass == .background }
        let earlier = queuedByClass.reduce(0) { $0 + ($1.key < .background ? $1.value : 0) }
        return max(0, victims - earlier)
    }
    func isQueued(_ taskId: Int) -> Bool { queued[taskId] != nil }
    func isRunning(_ taskId: Int) -> Bool { running[taskId] != nil }

    mutating func enqueue(_ ticket: Ticket) {
        guard running[ticket.taskId] == nil, queued[ticket.taskId] == nil else { return }
        order += 1
        var ticket = ticket
        ticket.hostLimit = max(1, ticket.hostLimit)
        let host = internHost(ticket.host)
        hostLimits[host] = ticket.hostLimit
        if let limit = ticket.sessionLimit { sessionLimits[ticket.session] = limit }
        hostUsers[host, default: 0] += 1
        sessionUsers[ticket.session, default: 0] += 1
        let entry = Queued(ticket, order: order, host: host, session: internSession(ticket.session),
                           audience: internAudience(ticket.audience))
        let key = entry.key(taskId: ticket.taskId)
        queued[ticket.taskId] = entry
        listed[entry.audience, default: OrderedKeys()].insert(key)
        queuedByClass[ticket.schedulingClass, default: 0] += 1
        if !ticket.discretionary { queuedNotDiscretionary += 1 }
        heap.insert(key)
    }

    /// Takes a task out, whether queued or running (its slot is freed).
    mutating func remove(taskId: Int) {
        if let running = running.removeValue(forKey: taskId) {
            let entry = running.entry
            if running.ended {
                ended -= 1
                releaseSession(name(of: entry))
            } else {
                runningByClass[entry.schedulingClass, default: 1] -= 1
                release(host: entry.hostId, session: name(of: entry))
            }
            forget(host: entry.hostId, session: name(of: entry))
            if let want = connectionWants.remove(taskId) {
                for (host, count) in want.granted { releaseHost(host, count) }
                for host in want.named { forgetHost(host) }
            }
        }
        if let entry = queued.removeValue(forKey: taskId) {
            unlist(entry, taskId: taskId)
            queuedByClass[entry.schedulingClass, default: 1] -= 1
            if !entry.discretionary { queuedNotDiscretionary -= 1 }
            // It may have been the one sent back to take a free slot: another must take its place.
            markForRefill(host: entry.hostId, session: name(of: entry))
            forget(host: entry.hostId, session: name(of: entry))
        }
    }

    /// One task of `host` and `session` left; with the last one, what is kept for them goes.
    private mutating func forget(host: Int, session: String) {
        forgetHost(host)
        sessionUsers[session, default: 1] -= 1
        if sessionUsers[session] == 0 {
            sessionUsers[session] = nil
            if let number = sessionNumbers.removeValue(forKey: session) { sessionNames[number] = nil }
            sessionLimits[session] = nil
            parkedBySession[session] = nil
            sessionsToRefill.remove(session)
        }
    }

    /// One user of `host` left (a task, or a connection want naming it).
    private mutating func forgetHost(_ host: Int) {
        hostUsers[host, default: 1] -= 1
        if hostUsers[host] == 0 {
            hostUsers[host] = nil
            if let name = hostNames.removeValue(forKey: host) { hostIds[name] = nil }
            hostLimits[host] = nil
            parkedByHost[host] = nil
            hostsToRefill.remove(host)
            connectionWants.forget(host: host)
        }
    }

    /// How many hosts and sessions the scheduler keeps anything for (tests: nothing leaks).
    var bookkeeping: (hosts: Int, sessions: Int) {
        (hostIds.count + hostLimits.count + parkedByHost.count + hostUsers.count + connectionWants.bookkeeping,
         sessionLimits.count + parkedBySession.count + sessionUsers.count + perSession.count + sessionNumbers.count + sessionNames.count
            + listed.count + audienceNumbers.count + audienceNames.count)
    }

    /// Running task `taskId`'s transfer ended; its completion is recorded next, then it is
    /// removed. Its host slot and its place under the global cap are free from now: the next
    /// task starts while the completion is recorded (a file placed, rows and events written),
    /// so the engine does not wait for that with free connections (issue 18). Its session slot
    /// stays until `remove`: `maximumConcurrentTasks` counts tasks. Answers whether a slot freed.
    @discardableResult
    mutating func transferEnded(taskId: Int) -> Bool {
        guard let task = running[taskId], !task.ended else { return false }
        running[taskId]!.ended = true
        ended += 1
        runningByClass[task.entry.schedulingClass, default: 1] -= 1
        releaseHost(task.entry.hostId, 1)
        return true
    }

    /// Re-orders a queued task at once; a running task keeps its slot (its new priority counts
    /// when a preemption victim is chosen).
    mutating func reprioritise(taskId: Int, priority: Double) {
        if running[taskId] != nil {
            running[taskId]!.entry.priority = priority
            connectionWants.rekey(taskId, key(of: running[taskId]!))
            return
        }
        guard queued[taskId] != nil, queued[taskId]!.priority != priority else { return }
        // The old key stays in its heap, stale; the new one goes to the main heap (its caps are
        // checked again there). The arrival order is kept: back at the old priority, a task
        // takes its old place.
        let audience = queued[taskId]!.audience
        listed[audience]?.remove(queued[taskId]!.key(taskId: taskId))
        queued[taskId]!.priority = priority
        heap.insert(queued[taskId]!.key(taskId: taskId))
        listed[audience, default: OrderedKeys()].insert(queued[taskId]!.key(taskId: taskId))
    }

    /// Admits as many queued tasks as the caps allow, in admission order, preempting background
    /// transfers for earlier classes when the global cap is full.
    mutating func admit() -> [Decision] {
        refill()
        var decisions: [Decision] = []
        while let key = heap.min {
            guard let entry = queued[key.taskId], entry.key(taskId: key.taskId) == key else {
                heap.removeMin()  // stale: removed or re-prioritised
                continue
            }
            if entry.discretionary && !discretionaryMayStart { break }  // all after it are too
            // Running tasks that want more connections to this host and come first in line.
            if !connectionWants.isEmpty { grantConnections(to: entry.hostId, before: key, &decisions) }
            if perHost[entry.hostId, default: 0] >= Int(entry.hostLimit) {
                heap.removeMin()
                parkedByHost[entry.hostId, default: Heap()].insert(key)
                continue
            }
            if let limit = entry.sessionCap, perSession[name(of: entry), default: 0] >= limit {
                heap.removeMin()
                parkedBySession[name(of: entry), default: Heap()].insert(key)
                continue
            }
            heap.removeMin()
            if runningCount >= maxConcurrent {
                // Only for a task that can start once it has the slot (its host and session have room).
                guard let victim = preemptionVictim(for: entry) else {
                    heap.insert(key)
                    break
                }
                remove(taskId: victim)
                decisions.append(.preempt(victim))
            }
            start(entry, taskId: key.taskId)
            decisions.append(.start(key.taskId))
        }
        if !connectionWants.isEmpty {
            // A queued task that waits for the global cap does not hold grants back: they do
            // not count against it. One bound for the host parked there does (`firstParked`).
            // One connection per host in turns, so that a download's mirrors share its load.
            var granting = true
            while granting {
                granting = false
                for host in connectionWants.wantedHosts where grantConnections(to: host, before: nil, atMost: 1, &decisions) > 0 { granting = true }
            }
        }
        return decisions
    }

    // MARK: extra connections of running tasks

    /// Running task `taskId` wants to hold `wanted` connections beyond its own in all, to any of
    /// `hosts` (host keys, `hostKey`; its source's and its mirrors'); it is granted them by
    /// `admit` as those hosts have room. A new call replaces the last one. Ignored for a task
    /// that is not running.
    mutating func wantConnections(taskId: Int, hosts: [String], wanted: Int) {
        guard let entry = running[taskId] else { return }
        var ids: [Int] = []
        for name in hosts {
            let isNew = hostIds[name] == nil
            let id = internHost(name)
            if isNew || hostLimits[id] == nil { hostLimits[id] = Int(entry.entry.hostLimit) }
            ids.append(id)
        }
        for id in connectionWants.set(taskId, key: key(of: entry), hosts: ids, wanted: wanted) { hostUsers[id, default: 0] += 1 }
    }

    /// Running task `taskId` closed `count` of its granted connections to `host`.
    mutating func returnConnections(taskId: Int, host: String, count: Int = 1) {
        guard let id = hostIds[host] else { return }
        releaseHost(id, connectionWants.giveBack(taskId, host: id, count: count))
    }

    /// The extra connections task `taskId` holds (tests, `GET /v1/queue`).
    func grantedConnections(taskId: Int) -> Int { connectionWants.wants[taskId]?.holding ?? 0 }

    /// Grants `host`'s free slots to the running tasks that want them, in line order, while
    /// each comes before `limit` (a queued task that waits) and before any task parked on the
    /// host (it takes the slot when it surfaces); `atMost` of them. Answers how many.
    @discardableResult
    private mutating func grantConnections(to host: Int, before limit: Key?, atMost: Int = .max, _ decisions: inout [Decision]) -> Int {
        var granted = 0
        while granted < atMost, perHost[host, default: 0] < (hostLimits[host] ?? 1), let key = connectionWants.first(for: host) {
            if let limit, !(key < limit) { break }
            if key.discretionary && !discretionaryMayStart { break }  // all after it are too
            if let parked = firstParked(on: host), parked < key { break }
            connectionWants.grant(key.taskId, host: host)
            perHost[host, default: 0] += 1
            decisions.append(.grant(key.taskId, host: hostNames[host] ?? ""))
            granted += 1
        }
        return granted
    }

    /// The best task parked on `host`, its stale keys dropped on the way.
    private mutating func firstParked(on host: Int) -> Key? {
        while let key = parkedByHost[host]?.min {
            if let entry = queued[key.taskId], entry.key(taskId: key.taskId) == key { return key }
            parkedByHost[host]?.removeMin()
        }
        return nil
    }

    /// `count` connections to `host` ended: their slots are free.
    private mutating func releaseHost(_ host: Int, _ count: Int) {
        guard count > 0 else { return }
        perHost[host, default: count] -= count
        if perHost[host] == 0 { perHost[host] = nil }
        if parkedByHost[host] != nil { hostsToRefill.insert(host) }
    }

    /// A running task's place in line for connections: its class, priority and arrival.
    private func key(of running: Running) -> Key { running.entry.key(taskId: running.taskId) }

    /// Queued tasks in the order they would be admitted if every cap had room, with the reason
    /// each waits: every queued task's (tests and tools; `listing` reads a page).
    func queue(limit: Int = .max) -> [QueuedTask] {
        listed.values.flatMap { Array($0.ascending) }.sorted().prefix(limit).compactMap(queuedTask)
    }

    /// A page of the queue as `requester` sees it: the first `limit` queued tasks whose audience
    /// is everyone or the requester, in admission order, each with its 1-based place, and the
    /// total. With `everyone` (an admin) place and total count every queued task, else only
    /// those the requester sees. Costs the page (and, for an admin's places, the audiences), not
    /// the queue: a page of 100 with 100,000 queued is read as fast as with 100.
    func listing(requester: String?, everyone: Bool, limit: Int) -> (total: Int, tasks: [(task: QueuedTask, position: Int)]) {
        let own = requester.flatMap { audienceNumbers[$0] }.flatMap { listed[$0] } ?? OrderedKeys()
        let common = listed[Self.everyone] ?? OrderedKeys()
        var tasks: [(task: QueuedTask, position: Int)] = []
        var ownKeys = own.ascending.makeIterator(), commonKeys = common.ascending.makeIterator()
        var nextOwn = ownKeys.next(), nextCommon = commonKeys.next()
        while tasks.count < limit {
            let key: Key
            if let a = nextOwn, nextCommon.map({ a < $0 }) ?? true {
                key = a
                nextOwn = ownKeys.next()
            } else if let b = nextCommon {
                key = b
                nextCommon = commonKeys.next()
            } else {
                break
            }
            guard let task = queuedTask(key) else { continue }
            let position = everyone ? listed.values.reduce(1) { $0 + $1.rank(of: key) } : tasks.count + 1
            tasks.append((task, position))
        }
        return (everyone ? queued.count : own.count + common.count, tasks)
    }

    private func queuedTask(_ key: Key) -> QueuedTask? {
        guard let entry = queued[key.taskId] else { return nil }
        return QueuedTask(taskId: key.taskId, schedulingClass: entry.schedulingClass, priority: entry.priority,
                          discretionary: entry.discretionary, blockedBy: blocker(of: entry), key: key)
    }

    // MARK: internals

    private var discretionaryMayStart: Bool { discretionaryWindowOpen && queuedNotDiscretionary == 0 }

    private mutating func internHost(_ host: String) -> Int {
        if let id = hostIds[host] { return id }
        // Numbers stay below 2^31 (a queued entry keeps its host in 32 bits) and are not reused
        // while in use.
        while hostNames[nextHostId] != nil { nextHostId = (nextHostId + 1) & Int(Int32.max) }
        let id = nextHostId
        nextHostId = (nextHostId + 1) & Int(Int32.max)
        hostIds[host] = id
        hostNames[id] = host
        return id
    }

    private mutating func internSession(_ session: String) -> Int32 {
        if let number = sessionNumbers[session] { return number }
        // Numbers are not reused while in use: a session keeps its number while it has tasks here.
        while sessionNames[nextSessionNumber] != nil { nextSessionNumber &+= 1 }
        let number = nextSessionNumber
        nextSessionNumber &+= 1
        sessionNumbers[session] = number
        sessionNames[number] = session
        return number
    }

    private mutating func internAudience(_ audience: String?) -> Int32 {
        guard let audience else { return Self.everyone }
        if let number = audienceNumbers[audience] { return number }
        while audienceNames[nextAudienceNumber] != nil || nextAudienceNumber == Self.everyone { nextAudienceNumber &+= 1 }
        let number = nextAudienceNumber
        nextAudienceNumber &+= 1
        audienceNumbers[audience] = number
        audienceNames[number] = audience
        return number
    }

    /// Takes a task that leaves the queue out of its audience's listing; an audience with
    /// nothing queued is forgotten.
    private mutating func unlist(_ entry: Queued, taskId: Int) {
        listed[entry.audience]?.remove(entry.key(taskId: taskId))
        guard listed[entry.audience]?.isEmpty == true else { return }
        listed[entry.audience] = nil
        if let name = audienceNames.removeValue(forKey: entry.audience) { audienceNumbers[name] = nil }
    }

    /// The session id of a queued or running entry (its number is interned while it is here).
    private func name(of entry: Queued) -> String { sessionNames[entry.session] ?? "" }

    private mutating func start(_ entry: Queued, taskId id: Int) {
        queued[id] = nil
        unlist(entry, taskId: id)
        queuedByClass[entry.schedulingClass, default: 1] -= 1
        if !entry.discretionary { queuedNotDiscretionary -= 1 }
        startOrder += 1
        running[id] = Running(entry: entry, taskId: id, started: startOrder)
        runningByClass[entry.schedulingClass, default: 0] += 1
        perHost[entry.hostId, default: 0] += 1
        perSession[name(of: entry), default: 0] += 1
    }

    /// Frees a running task's host and session slots.
    private mutating func release(host: Int, session: String) {
        releaseHost(host, 1)
        releaseSession(session)
    }

    private mutating func releaseSession(_ session: String) {
        perSession[session, default: 1] -= 1
        if perSession[session] == 0 { perSession[session] = nil }
        if parkedBySession[session] != nil { sessionsToRefill.insert(session) }
    }

    private mutating func markForRefill(host: Int, session: String) {
        if parkedByHost[host] != nil { hostsToRefill.insert(host) }
        if parkedBySession[session] != nil { sessionsToRefill.insert(session) }
    }

    /// Moves as many parked tasks back to the main heap as their host or session has free slots,
    /// best first. Some may be moved in vain (a task already in the main heap takes the slot);
    /// they are parked again when they surface. O(slots × log n).
    private mutating func refill() {
        for host in hostsToRefill {
            let free = (hostLimits[host] ?? 1) - perHost[host, default: 0]
            guard free > 0, var waiting = parkedByHost.removeValue(forKey: host) else { continue }
            for _ in 0..<free {
                guard let key = popLive(&waiting) else { break }
                heap.insert(key)
            }
            if !waiting.isEmpty { parkedByHost[host] = waiting }
        }
        hostsToRefill.removeAll(keepingCapacity: true)
        for session in sessionsToRefill {
            let free = (sessionLimits[session] ?? .max) - perSession[session, default: 0]
            guard free > 0, var waiting = parkedBySession.removeValue(forKey: session) else { continue }
            for _ in 0..<min(free, 1 << 16) {
                guard let key = popLive(&waiting) else { break }
                heap.insert(key)
            }
            if !waiting.isEmpty { parkedBySession[session] = waiting }
        }
        sessionsToRefill.removeAll(keepingCapacity: true)
    }

    /// The best key in `waiting` that is still current, dropping stale ones on the way.
    private func popLive(_ waiting: inout Heap<Key>) -> Key? {
        while let next = waiting.popMin() {
            if let entry = queued[next.taskId], entry.key(taskId: next.taskId) == next { return next }
        }
        return nil
    }

    /// The running transfer a queued task may take the slot of: a preemptible background one,
    /// for a task of an earlier class; the lowest priority, then the most recently started
    /// (it has the least to lose). Discretionary tasks never preempt.
    private func preemptionVictim(for ticket: Queued) -> Int? {
        guard ticket.schedulingClass < .background, !ticket.discretionary else { return nil }
        var best: Running?
        for running in running.values where !running.ended && running.entry.preemptible && running.entry.schedulingClass == .background {
            guard let current = best else { best = running; continue }
            if running.entry.priority < current.entry.priority
                || (running.entry.priority == current.entry.priority && running.started > current.started) {
                best = running
            }
        }
        return best?.taskId
    }

    private func blocker(of entry: Queued) -> Blocker {
        if entry.discretionary && !discretionaryMayStart { return .discretionary }
        if perHost[entry.hostId, default: 0] >= Int(entry.hostLimit) { return .hostCap }
        if let limit = entry.sessionCap, perSession[name(of: entry), default: 0] >= limit { return .sessionCap }
        return .globalCap
    }
}
