internal import FoundationEssentials
internal import Synchronization
internal import JSONModel
internal import TransferModel
internal import TransferEngine
internal import TransferStore
extension TransferService {
    /// Applies one engine update to the task's record and feed.
    func handle(_ id: Int, _ update: TransferUpdate) { handle([(id, update)]) }

    /// Applies engine updates in order (the engine updates thread hands over what queued
    /// meanwhile), up to `updatesPerLock` under one hold of the lock: a long-poll woken by the
    /// first event reads the feed after the rest of the run is in it, so a client gets the
    /// events of many tasks in one answer instead of one answer per event. What a completion
    /// answers waits for the commit; what the other updates answer does not.
    func handle(_ batch: [(taskId: Int, update: TransferUpdate)]) {
        var start = batch.startIndex
        while start < batch.endIndex {
            let run = batch[start..<min(batch.endIndex, start + Self.updatesPerLock)]
            start = run.endIndex
            let (now, durable) = state.withLock { s in
                var now = Deliveries(), durable = Deliveries()
                for (id, update) in run {
                    var deliveries = Deliveries()
                    apply(update, task: id, &s, &deliveries)
                    if update.isCompletion { durable.add(deliveries) } else { now.add(deliveries) }
                }
                return (now, durable)
            }
            now.run()
            // A completion is answered only once it is durable: a client told "completed" must
            // never find the task lost to a crash a moment later.
            if run.contains(where: { $0.update.isCompletion }) { store.afterCommit { durable.run() } }
        }
    }

    /// The engine's transfers of these tasks ended; their completions come next. Their host
    /// slots and places under the global cap go to queued tasks now (`Scheduler.transferEnded`),
    /// while their files are placed and their completions recorded.
    func transfersEnded(_ ids: [Int]) {
        let deliveries = state.withLock { s in
            var deliveries = Deliveries()
            var freed = false
            for id in ids where s.scheduler.transferEnded(taskId: id) { freed = true }
            if freed { admit(&s, &deliveries) }
            return deliveries
        }
        deliveries.run()
    }

    /// How many updates one hold of the service's lock applies at most, so that a long run of
    /// them never keeps a request waiting for long.
    static let updatesPerLock = 64

    func apply(_ update: TransferUpdate, task id: Int, _ s: inout ServiceState, _ deliveries: inout Deliveries) {
        // The fields needed, read in place (a copy of the entry retains and releases each of
        // its references, for every update).
        guard let state = s.tasks[id]?.task.state, state != .completed,
              let session = s.tasks[id]?.task.sessionId, let schedulingClass = s.tasks[id]?.task.schedulingClass,
              let kind = s.tasks[id]?.task.kind else { return }
        // A transient failure may be tried again instead of completing the task.
        if case .completed(let outcome) = update, retryIfTransient(&s, task: id, after: outcome, &deliveries) { return }
        if cacheIntercepts(&s, task: id, update, &deliveries) { return }  // a 304 the URL cache answers
        switch update {
        case .connecting:
            return
        case .decision(let point):
            decisionRequested(&s, task: id, point, &deliveries)
        case .stream(let change):
            streamChanged(&s, task: id, change, &deliveries)
        case .transactions(let transactions):
            s.tasks[id]?.transactions += transactions
        case .segmentConnections(let request):
            segmentConnectionsChanged(&s, task: id, request, &deliveries)
        case .redirect(let statusCode, let from, let to, let method, let headers, let decided):
            s.tasks[id]?.task.currentRequest?.url = to
            s.tasks[id]?.task.currentRequest?.method = method
            if let headers { s.tasks[id]?.task.currentRequest?.headers = headers }
            // A redirect the client decided was its event already (with its decisionId).
            if decided {
                changed(&s, task: id, persist: true, &deliveries)
                return
            }
            emit(&s, session: session, task: id, .willPerformHTTPRedirection,
                 ["statusCode": .integer(Int64(statusCode)), "url": .string(from), "newURL": .string(to)], &deliveries)
            changed(&s, task: id, persist: true, &deliveries)
        case .challenge(let report):
            emit(&s, session: session, task: id, .didReceiveChallenge, report.eventFields, &deliveries)
        case .response(let response):
            s.tasks[id]?.task.response = response
            let actions = transition(&s, task: id, .responseReceived)
            s.tasks[id]?.task.currentRequest?.url = response.url
            s.tasks[id]?.task.progress.bytesExpectedToReceive = response.expectedContentLength
            emit(&s, session: session, task: id, .didReceiveResponse, ["response": response.jsonValue], &deliveries)
            perform(actions, task: id, &s, &deliveries)
        case .becameDownload:
            // URLSession gives a new download task object; here the same task goes on as a
            // download (its id, events and endpoints), so the event names that same id.
            s.tasks[id]?.task.kind = .download
            if let ended = s.tasks[id]?.liveBody?.finish(.failed("the task became a download: its body is a file, at GET /v1/tasks/\(id)/file")) {
                deliveries.add(ended.run)
            }
            s.tasks[id]?.liveBody = nil
            emit(&s, session: session, task: id, .didBecomeDownloadTask, ["downloadTaskId": .integer(Int64(id))], &deliveries)
            changed(&s, task: id, persist: true, &deliveries)
        case .received(let bytes, let total, let expected, let speed):
            s.rates.received(bytes, schedulingClass)
            s.tasks[id]?.task.progress.bytesReceived = total
            s.tasks[id]?.task.progress.bytesExpectedToReceive = expected
            s.tasks[id]?.task.progress.bytesPerSecond = speed
            if kind == .download {
                emit(&s, session: session, task: id, .didWriteData, [
                    "bytesWritten": .integer(Int64(bytes)), "totalBytesWritten": .integer(Int64(total)),
                    "totalBytesExpectedToWrite": expected.map { .integer(Int64($0)) } ?? .null,
                ], &deliveries)
            } else if s.tasks[id]?.task.dataInEvents == true, let live = s.tasks[id]?.liveBody {
                // The bytes themselves, as URLSession's didReceiveData gives them: this report's
                // range of the body, in events of at most maxDataPerEvent bytes.
                for start in stride(from: max(0, total - bytes), to: total, by: TaskEvent.maxDataPerEvent) {
                    let end = min(total, start + TaskEvent.maxDataPerEvent)
                    emit(&s, session: session, task: id, .didReceiveData, [
                        "bytesReceived": .integer(Int64(end - start)), "totalBytesReceived": .integer(Int64(end)),
                        "totalBytesExpectedToReceive": expected.map { .integer(Int64($0)) } ?? .null,
                        "offset": .integer(Int64(start)), "data": .string(live.bytes(start..<end).base64EncodedString()),
                    ], &deliveries)
                }
            } else {
                emit(&s, session: session, task: id, .didReceiveData, [
                    "bytesReceived": .integer(Int64(bytes)), "totalBytesReceived": .integer(Int64(total)),
                    "totalBytesExpectedToReceive": expected.map { .integer(Int64($0)) } ?? .null,
                ], &deliveries)
            }
            changed(&s, task: id, persist: false, &deliveries)
        case .sent(let bytes, let total, let expected):
            s.rates.sent(bytes, schedulingClass)
            s.tasks[id]?.task.progress.bytesSent = total
            emit(&s, session: session, task: id, .didSendBodyData, [
                "bytesSent": .integer(Int64(bytes)), "totalBytesSent": .integer(Int64(total)),
                "totalBytesExpectedToSend": expected.map { .integer(Int64($0)) } ?? .null,
            ], &deliveries)
            changed(&s, task: id, persist: false, &deliveries)
        case .completed(.success(let body, let response, let location, let digest)):
            if s.tasks[id]?.task.response == nil { s.tasks[id]?.task.response = response }
            s.tasks[id]?.task.digest = digest
            if let location {
                // The file is in place: tell the client where before the task completes.
                s.tasks[id]?.task.location = location
                emit(&s, session: session, task: id, .didFinishDownloadingTo, ["location": .string(location)], &deliveries)
                complete(&s, task: id, error: nil, body: nil, &deliveries)
            } else {
                s.tasks[id]?.task.progress.bytesReceived = body.count
                complete(&s, task: id, error: nil, body: body, &deliveries)
            }
        case .checkpoint(let state):
            // Stored now, not with the next progress checkpoint: the engine checkpoints every
            // second and so does the store's timer, so waiting let the stored offset lag the
            // synced file by up to two intervals, all redownloaded after a kill -9. A new
            // version, because the store keeps a row only for a higher one: saved under the
            // version the timer had just stored, the checkpoint was dropped. (Long-polls see
            // a version with no visible change, once a second at most: progress moves more.)
            s.tasks[id]?.task.resume = state
            changed(&s, task: id, persist: true, &deliveries)
        case .needsBody(let sent):
            emit(&s, session: session, task: id, .needNewBodyStream, ["totalBytesSent": .integer(Int64(sent))], &deliveries)
        case .detached(let resume):
            detached(&s, task: id, resume: resume, &deliveries)
        case .resumed(let offset, let expectedTotal):
            s.tasks[id]?.task.progress.bytesReceived = offset
            s.tasks[id]?.task.progress.bytesExpectedToReceive = expectedTotal
            emit(&s, session: session, task: id, .didResumeAtOffset, [
                "fileOffset": .integer(Int64(offset)),
                "expectedTotalBytes": expectedTotal.map { .integer(Int64($0)) } ?? .null,
            ], &deliveries)
            changed(&s, task: id, persist: true, &deliveries)
        case .uploadState(let upload):
            s.tasks[id]?.task.resumable = upload
            s.tasks[id]?.task.progress.bytesSent = upload.offset
            changed(&s, task: id, persist: true, &deliveries)
        case .uploadResumed(let offset, let expectedTotal, let uploadURL):
            // didSendBodyData counts what the server has: back to its offset, on from there.
            s.tasks[id]?.task.progress.bytesSent = offset
            let actions = transition(&s, task: id, .uploadResumed)
            emit(&s, session: session, task: id, .didResumeUpload, [
                "offset": .integer(Int64(offset)), "totalBytesExpectedToSend": .integer(Int64(expectedTotal)),
                "uploadURL": .string(uploadURL),
            ], &deliveries)
            perform(actions, task: id, &s, &deliveries)
        case .uploadRetrying:
            perform(transition(&s, task: id, .uploadRetrying), task: id, &s, &deliveries)
        case .completed(.failure(let error)):
            complete(&s, task: id, error: error, body: nil, &deliveries)
        case .completed(.destinationTaken(let error, let response, let location, let digest)):
            // The file is whole and kept where the task's file endpoint serves it; the
            // task fails because it is not where the client asked.
            if s.tasks[id]?.task.response == nil { s.tasks[id]?.task.response = response }
            s.tasks[id]?.task.digest = digest
            s.tasks[id]?.task.location = location
            emit(&s, session: session, task: id, .didFinishDownloadingTo, ["location": .string(location)], &deliveries)
            complete(&s, task: id, error: error, body: nil, &deliveries)
        case .completed(.interrupted(var error, let state)):
            // The partial file stays; the error carries resume data to continue from it.
            if let task = s.tasks[id]?.task { error.resumeData = sealedResumeData(for: task, at: state) }
            s.tasks[id]?.task.resume = state
            s.tasks[id]?.task.progress.bytesReceived = state.offset
            complete(&s, task: id, error: error, body: nil, &deliveries)
        }
    }

    /// A suspended download let its connection go: it frees its slot and waits, its partial file
    /// kept, to be resumed with a range. A resume or cancel the client posted while the engine
    /// was letting go (the engine no longer had the transfer) is carried out now.
    private func detached(_ s: inout ServiceState, task id: Int, resume: ResumeState?, _ deliveries: inout Deliveries) {
        guard s.tasks[id] != nil else { return }
        s.tasks[id]?.inEngine = false
        s.tasks[id]?.task.decision = nil  // its transfer let go; a new one asks again
        s.tasks[id]?.task.resume = resume
        perform(transition(&s, task: id, .detached), task: id, &s, &deliveries)
    }
}

extension TransferUpdate {
    /// Ends the task: a transfer's completion, or a stream closed on both sides.
    var isCompletion: Bool {
        switch self {
        case .completed, .stream(.finished): true
        default: false
        }
    }
}
