internal import Glibc
internal import TransferModel

/// One download fetched over several connections at once (`"segments"`, issue 18 item 2): the
/// task's own `Transfer` (the first connection, worker 0, whose plain GET told the length and
/// validator and goes on writing part 0) and the ranged `Transfer`s of the other workers, each
/// writing its part in place into the one preallocated partial file. The service sees one task:
/// the first transfer reports the response, the progress of every part and the completion.
///
/// Engine thread only (not Sendable). `EngineLoop+Segments` adds and removes the workers' easy
/// handles; this keeps the plan, the sources and the checks.
final class SegmentedDownload {
    let taskId: Int
    /// The task's transfer: worker 0, the reporter.
    let primary: Transfer
    private(set) var plan: SegmentPlan
    /// The validators and length every ranged answer must match (`RangedAnswer`).
    let representation: ResumeState
    /// The URLs of the resource: the task's (after redirects) first, then its mirrors.
    let sources: [String]
    /// Sources whose answers were wrong (other bytes, no ranges) or that failed: never used again.
    private(set) var dropped: Set<Int> = []
    /// How many connections it may use at once.
    let connections: Int
    /// Whether worker 0's GET is still running.
    var primaryRunning = true
    /// When worker 0's GET last wrote a byte (`EngineLoop.now`): the task's own idle clock
    /// counts every connection's bytes, so a stall of this one is told by this
    /// (`EngineLoop.retireStalledWorkers`).
    var primaryActivity = EngineLoop.now()
    /// Each source's origin (`RequestURL.origin`), what the scheduler's grants name.
    let sourceOrigins: [String]
    /// Where the task's own slot leads (its first source, where worker 0's GET went after any
    /// redirect): a worker may use that slot there once worker 0's GET has ended.
    let baseOrigin: String
    /// Connections the scheduler granted beyond the task's own and not yet given back, per origin.
    var granted: [String: Int] = [:]
    /// What was last asked of the scheduler (`SegmentConnections`), so the same is not sent again.
    var reported: (wanted: Int, origins: [String])?
    /// A worker could not be started: want no more than is held (a grant that cannot be used
    /// would be given back and granted again in a loop).
    var workerStartFailed = false

    /// A ranged connection: where it fetches from, the range it asked for, and whether its
    /// answer was refused (then none of its bytes are written).
    struct Worker {
        let transfer: Transfer
        let source: Int
        let first: Int
        let last: Int
        /// Its answer passed the checks: only then are its bytes written.
        var accepted = false
        var refused: String?
    }
    private(set) var workers: [Int: Worker] = [:]
    private var nextWorker = 1
    /// Sources dropped and not yet reported (`connectionsToReport`).
    private var unreportedDrops: [DroppedSource] = []

    init(primary: Transfer, plan: SegmentPlan, representation: ResumeState, sources: [String], connections: Int, origin: (String) -> String) {
        taskId = primary.job.taskId
        self.primary = primary
        self.plan = plan
        self.representation = representation
        self.sources = sources
        self.connections = connections
        sourceOrigins = sources.map(origin)
        baseOrigin = sourceOrigins[0]
    }

    var usableSources: [Int] { sources.indices.filter { !dropped.contains($0) } }
    var runningConnections: Int { workers.count + (primaryRunning ? 1 : 0) }

    // MARK: connections the scheduler granted

    /// Workers open to `origin`.
    func workers(on origin: String) -> Int { workers.values.filter { sourceOrigins[$0.source] == origin }.count }

    /// Whether the task's own slot is free for a worker at `origin`.
    private func baseSlotFree(on origin: String) -> Bool { origin == baseOrigin && !primaryRunning }

    /// Granted connections to `origin` that workers use (one worker there may use the task's own slot).
    func grantsInUse(on origin: String) -> Int { max(0, workers(on: origin) - (baseSlotFree(on: origin) ? 1 : 0)) }

    /// Whether a new worker may go to `source`: a grant, or the task's own slot, is free there.
    func hasRoom(_ source: Int) -> Bool {
        let origin = sourceOrigins[source]
        return workers(on: origin) < granted[origin, default: 0] + (baseSlotFree(on: origin) ? 1 : 0)
    }

    /// What to ask of the scheduler now that the workers are placed: grants no worker uses go
    /// back (each was offered to every free part first), and while a part can still be
    /// taken or split the download wants as many as its segments allow beyond its own.
    func connectionsToReport() -> SegmentConnections? {
        var returned: [String] = []
        for (origin, count) in granted {
            let unused = count - grantsInUse(on: origin)
            guard unused > 0 else { continue }
            returned += Array(repeating: origin, count: unused)
            granted[origin] = count - unused == 0 ? nil : count - unused
        }
        let holding = granted.values.reduce(0, +)
        let wanted = plan.hasWorkToClaim && !workerStartFailed && !usableSources.isEmpty ? connections - 1 : holding
        var origins: [String] = []
        for source in usableSources where !origins.contains(sourceOrigins[source]) { origins.append(sourceOrigins[source]) }
        if returned.isEmpty, unreportedDrops.isEmpty, let reported, reported.wanted == wanted, reported.origins == origins { return nil }
        reported = (wanted, origins)
        defer { unreportedDrops = [] }
        return SegmentConnections(wanted: wanted, origins: origins, returned: returned, dropped: unreportedDrops)
    }

    /// Every grant goes back (the download goes on over one connection).
    func returnAllGrants() -> SegmentConnections {
        let returned = granted.flatMap { Array(repeating: $0.key, count: $0.value) }
        granted = [:]
        reported = (0, [])
        defer { unreportedDrops = [] }
        return SegmentConnections(wanted: 0, origins: [], returned: returned, dropped: unreportedDrops)
    }

    /// A new worker's assignment: a part (free, or split off a straggler) and a source, taken
    /// round-robin over the usable sources `mayUse` allows (a host with room), so mirrors share
    /// the load. Nil when there is no work to hand out, no connection to spare or no source.
    func assign(mayUse: (Int) -> Bool) -> (worker: Int, source: Int, range: Range<Int>)? {
        let usable = usableSources
        guard !usable.isEmpty, runningConnections < connections else { return nil }
        let worker = nextWorker
        let rotated = usable.indices.map { usable[(worker + $0) % usable.count] }
        guard let source = rotated.first(where: mayUse), let index = plan.claim(for: worker) else { return nil }
        nextWorker += 1
        let part = plan.parts[index]
        return (worker, source, part.next..<part.end)
    }

    func add(_ worker: Int, _ transfer: Transfer, source: Int, range: Range<Int>) {
        workers[worker] = Worker(transfer: transfer, source: source, first: range.lowerBound, last: range.upperBound - 1)
    }

    /// A worker could not even start: its part goes back to the pool.
    func abandon(_ worker: Int) {
        if let index = plan.part(of: worker) { plan.release(index) }
    }

    // MARK: the checks and the writes (inside curl_multi_perform)

    /// A worker's final response head: it must be the range asked for of the same
    /// representation (206, Content-Range first-last/total, the same validator) before a byte
    /// of it is written. A refused answer drops its source.
    func received(_ head: ResponseHead, worker id: Int) {
        guard let worker = workers[id] else { return }
        let verdict: RangedAnswer
        let coding = head.value("Content-Encoding")?.lowercased()
        if let coding, coding != "identity" {
            // Ranges of a coded body count coded bytes: not the bytes of the file.
            verdict = .mismatch("the range came with Content-Encoding \(coding)")
        } else if head.statusCode == 206 {
            verdict = RangedAnswer.check(contentRange: head.value("Content-Range"), contentLength: head.value("Content-Length"),
                                         etag: head.value("ETag"), lastModified: head.value("Last-Modified"),
                                         offset: worker.first, last: worker.last, resume: representation)
        } else {
            verdict = .mismatch("the server answered \(head.statusCode) to a range request, not 206")
        }
        switch verdict {
        case .continues: workers[id]?.accepted = true
        case .mismatch(let reason): workers[id]?.refused = reason
        }
    }

    /// Body bytes of `transfer`: written in place at its part's next offset, never past the
    /// part's end (which a split may have lowered). False ends the connection: its part is
    /// done, its answer was refused, or the disk refused the bytes.
    func take(_ bytes: RawSpan, from transfer: Transfer) -> Bool {
        let id = transfer.segmentWorker
        guard let index = plan.part(of: id) else { return false }
        let count = min(bytes.byteCount, plan.parts[index].remaining)
        guard count > 0 else { return false }
        let chunk = bytes.extracting(first: count)
        if id == 0 {
            // The first connection's GET continues part 0 from where the file ends.
            guard let file = primary.file, file.write(chunk) else { return writeFailed(transfer) }
            primaryActivity = transfer.lastActivity  // stamped as these bytes arrived
        } else {
            guard workers[id]?.accepted == true else { return false }  // unchecked or refused
            guard let file = primary.file, file.write(chunk, at: plan.parts[index].next) else { return writeFailed(transfer) }
        }
        plan.wrote(count, in: index)
        primary.countPartBytes(count)
        guard count == bytes.byteCount else { return false }
        // A part done while its request reaches further (the first GET, a range that was
        // split) ends now: waiting for the next chunk would hold the download up for as long
        // as a limited server waits before sending it (about a second behind limit_rate).
        guard plan.parts[index].isDone else { return true }
        let asked = id == 0 ? plan.total : (workers[id].map { $0.last + 1 } ?? plan.total)
        return plan.parts[index].end >= asked
    }

    private func writeFailed(_ transfer: Transfer) -> Bool {
        primary.failure = TaskError(.cannotWriteToFile, "cannot write the download: \(FileSystem.lastError)")
        return false
    }

    // MARK: connections that ended

    /// Worker `id`'s connection ended (`failure`: how its transfer failed): a part with bytes
    /// left goes back to the pool, and a source that answered wrongly or failed is dropped
    /// (mirrors: never mixed in again).
    func ended(worker id: Int, failure: TaskError?) {
        guard let worker = workers.removeValue(forKey: id) else { return }
        guard let index = plan.part(of: id) else { return }  // done
        plan.release(index)
        if let refusal = worker.refused {
            drop(worker.source, TaskError(.badServerResponse, "the source was dropped: \(refusal)"))
        } else if var failure {
            failure.message = "the source was dropped: \(failure.message)"
            drop(worker.source, failure)
        } else {
            // Ended cleanly but short: the server sent less than the range it announced.
            drop(worker.source, TaskError(.badServerResponse, "the source was dropped: the answer ended before its range was complete"))
        }
    }

    /// The engine stopped worker `id` (its source was dropped, or the task ends): its part's
    /// rest goes back to the pool; its source is not blamed for it.
    func stop(worker id: Int) {
        workers[id] = nil
        if let index = plan.part(of: id) { plan.release(index) }
    }

    /// Worker 0's GET ended: its part's rest (if any) goes back to the pool.
    func primaryEnded() {
        primaryRunning = false
        if let index = plan.part(of: 0) { plan.release(index) }
    }

    private func drop(_ source: Int, _ error: TaskError) {
        guard dropped.insert(source).inserted else { return }
        unreportedDrops.append(DroppedSource(url: sources[source], error: error))
    }

    /// No source is left while worker 0 still reads the whole resource: it takes the rest.
    func fallBackToFirstConnection() {
        plan.extendFirst()
    }

    /// Where each part stands, for a checkpoint or resume data.
    var resumeParts: [ResumePart] { plan.resumeParts }

    /// The worker transfers, for pausing, throttling and removal.
    var workerTransfers: [Transfer] { workers.values.map(\.transfer) }
}
