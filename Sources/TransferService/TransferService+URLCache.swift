internal import FoundationEssentials
internal import Synchronization
internal import JSONModel
internal import TransferModel
internal import TransferEngine

/// The URL cache in the task's path: before a transfer starts (`requestAfterCache`), when its
/// response and completion come back (`cacheIntercepts`), and when a stored body is delivered.
/// Only GET data tasks are served from the cache; unsafe methods that succeed invalidate it.
extension TransferService {
    /// Methods whose success invalidates the stored response of their URL (RFC 9111 section 4.4).
    static let unsafeMethods: Set<String> = ["POST", "PUT", "DELETE", "PATCH"]
    /// Request headers that make a GET the client's own conditional or partial request: the
    /// cache neither answers nor stores those.
    static let bypassingHeaders = ["Range", "If-None-Match", "If-Modified-Since", "If-Match", "If-Unmodified-Since", "If-Range"]

    /// The request a starting task sends after the URL cache had its say, or nil when the cache
    /// answered the task (its body follows from the cache's queue) or failed it. Under the lock.
    func requestAfterCache(_ s: inout ServiceState, task id: Int, _ deliveries: inout Deliveries) -> RequestInfo? {
        guard let entry = s.tasks[id], let session = s.sessions[entry.task.sessionId] else { return nil }
        var request = entry.task.originalRequest
        let bypasses = entry.cache?.bypassesCache ?? false
        // Cleared only when set: each change of an entry is a lookup in the task table.
        if entry.cache != nil { s.tasks[id]?.cache = nil }
        if entry.task.cacheStatus != nil { s.tasks[id]?.task.cacheStatus = nil }
        let method = request.method.uppercased()
        let unsafe = Self.unsafeMethods.contains(method)
        // Only an unsafe method touches the cache (it invalidates), and only a data task's GET
        // reads it: anything else, every download among them, is sent as it is.
        guard unsafe || (entry.task.kind == .data && method == "GET") else { return request }
        // data:, file:, ftp:, ftps: and sftp: are never cached (no HTTP caching rules apply to them).
        guard LocalScheme(url: request.url) == nil, RemoteFileScheme(url: request.url) == nil else { return request }
        // A task that declares a response disposition judges every response it gets, so it
        // neither reads from the URL cache nor stores in it (docs/tasks.md, "Response disposition").
        guard entry.task.responseDisposition == nil else { return request }
        let cache = urlCaches.cache(for: session)
        if unsafe {
            if let cache { s.tasks[id]?.cache = context(.invalidate, cache, request, CachePartition(tenant: entry.task.owner, configuration: session.configuration)) }
            return request
        }
        guard !Self.bypassingHeaders.contains(where: { ResponseInfo.value(of: $0, in: request.headers) != nil }) else { return request }
        let directives = CacheControl(headers: request.headers, isRequest: true)
        let partition = CachePartition(tenant: entry.task.owner, configuration: session.configuration)
        let stored = bypasses ? nil : cache?.lookup(url: request.url, partition: partition, requestHeaders: request.headers)
        switch CacheDecision.decide(policy: request.cachePolicy, request: directives, stored: stored, now: Date()) {
        case .serve:
            guard let cache else { return request }
            s.tasks[id]?.cache = context(.serving, cache, request, partition)
            serveFromCache(&s, task: id, cache: cache, status: .cache, &deliveries)
            return nil
        case .fail:
            s.tasks[id]?.inEngine = false
            complete(&s, task: id, error: TaskError(.resourceUnavailable, "the URL cache has no response for this request and the cache policy does not allow loading it"), body: nil, &deliveries)
            return nil
        case .revalidate(let headers):
            if let cache { s.tasks[id]?.cache = context(.revalidate, cache, request, partition) }
            request.headers.merge(headers) { own, _ in own }
            return request
        case .load(let headers):
            if let cache { s.tasks[id]?.cache = context(.store, cache, request, partition) }
            // The client's own Cache-Control or Pragma wins over what the policy adds.
            for (name, value) in headers where ResponseInfo.value(of: name, in: request.headers) == nil {
                request.headers[name] = value
            }
            return request
        }
    }

    private func context(_ role: CacheTaskContext.Role, _ cache: URLCache, _ request: RequestInfo, _ partition: CachePartition) -> CacheTaskContext {
        CacheTaskContext(role: role, cache: cache, url: request.url, partition: partition, requestHeaders: request.headers, requestTime: Date())
    }

    /// Engine updates the cache acts on, before their usual handling; true when consumed here.
    func cacheIntercepts(_ s: inout ServiceState, task id: Int, _ update: TransferUpdate, _ deliveries: inout Deliveries) -> Bool {
        guard s.tasks.contains(id) else { return false }
        let context = s.tasks[id]?.cache
        switch update {
        case .response(let response), .decision(.response(let response)):
            guard context?.role != .serving else { return false }  // the cache's own delivery
            if context != nil { s.tasks[id]?.cache?.responseTime = Date() }
            if context?.role == .revalidate, response.statusCode == 304, response.url == context?.url {
                // Not reported: the stored response is, once the transfer ends. A client that
                // decides responses decides that one (it is delivered from the cache without
                // asking, as the cached answer it is); the 304's own transfer goes on at once.
                s.tasks[id]?.cache?.notModified = response
                if case .decision = update { engine.submit(.decide(taskId: id, .allow)) }
                return true
            }
            s.tasks[id]?.task.cacheStatus = .network
            return false
        case .completed(.success(let body, let response, nil, _)):
            guard let context = s.tasks[id]?.cache else { return false }
            if context.role != .revalidate || context.notModified == nil {
                s.tasks[id]?.cache = nil  // the attempt is over: nothing keeps the cache or the headers
            }
            switch context.role {
            case .serving:
                return false
            case .invalidate:
                if (200..<400).contains(response.statusCode) {
                    context.cache.remove(url: context.url, partition: context.partition)
                    if response.url != context.url { context.cache.remove(url: response.url, partition: context.partition) }
                }
                return false
            case .revalidate where context.notModified != nil:
                revalidated(&s, task: id, context, &deliveries)
                return true
            case .store, .revalidate:
                if s.tasks[id]?.task.decisions.contains(.cache) == true, let policy = storagePolicy(s, task: id, context, response: response, body: body) {
                    // The client decides (willCacheResponse's completion handler): the task's
                    // completion waits for its answer (`answerCacheDecision`).
                    s.tasks[id]?.cacheDecision = CacheDecisionHold(context: context, response: response, body: body, completion: update)
                    s.tasks[id]?.inEngine = false  // the transfer has ended: a cancel completes the task
                    decisionRequested(&s, task: id, .cache(response, storagePolicy: policy.rawValue), &deliveries)
                    return true
                }
                storeIfAllowed(&s, task: id, context, response: response, body: body, &deliveries)
                return false
            }
        case .completed:
            s.tasks[id]?.cache = nil
            return false
        default:
            return false
        }
    }

    /// A storable response is announced (willCacheResponse, after its data and before the
    /// completion, as URLSession orders them) and stored.
    /// Where a response would be stored (nil: it is not storable, or fits no tier).
    private func storagePolicy(_ s: ServiceState, task id: Int, _ context: CacheTaskContext, response: ResponseInfo, body: Data) -> CacheStoragePolicy? {
        // With tokens the cache is shared by a token's clients (`CacheFreshness.isStorable`).
        guard s.tasks[id] != nil,
              CacheFreshness.isStorable(response, request: CacheControl(headers: context.requestHeaders, isRequest: true),
                                        shared: context.partition.isShared,
                                        authorized: ResponseInfo.value(of: "Authorization", in: context.requestHeaders) != nil) else { return nil }
        let policy = context.cache.storagePolicy(forSize: body.count)
        return policy == .notAllowed ? nil : policy
    }

    /// The client's answer to willCacheResponse: the response is stored as it says, then the
    /// held completion goes on (nothing intercepts it again: the attempt's cache context is gone).
    func answerCacheDecision(_ s: inout ServiceState, task id: Int, _ answer: DecisionAnswer, _ deliveries: inout Deliveries) {
        guard let hold = s.tasks[id]?.cacheDecision else { return }
        s.tasks[id]?.cacheDecision = nil
        let context = hold.context
        if answer == .store || answer == .storeInMemoryOnly {
            context.cache.store(url: hold.response.url, partition: context.partition, requestHeaders: context.requestHeaders, response: hold.response,
                                body: hold.body, requestTime: context.requestTime, responseTime: context.responseTime ?? Date(),
                                memoryOnly: answer == .storeInMemoryOnly)
        }
        s.tasks[id]?.cache = nil
        apply(hold.completion, task: id, &s, &deliveries)
    }

    private func storeIfAllowed(_ s: inout ServiceState, task id: Int, _ context: CacheTaskContext, response: ResponseInfo, body: Data, _ deliveries: inout Deliveries) {
        guard let task = s.tasks[id]?.task, let policy = storagePolicy(s, task: id, context, response: response, body: body) else { return }
        emit(&s, session: task.sessionId, task: id, .willCacheResponse,
             ["storagePolicy": .string(policy.rawValue), "response": response.jsonValue], &deliveries)
        context.cache.store(url: response.url, partition: context.partition, requestHeaders: context.requestHeaders, response: response, body: body,
                            requestTime: context.requestTime, responseTime: context.responseTime ?? Date())
    }

    /// The origin answered 304: the stored head takes the 304's fields and the stored body is
    /// served as the response. If the stored response went meanwhile, the task asks again
    /// without validators.
    private func revalidated(_ s: inout ServiceState, task id: Int, _ context: CacheTaskContext, _ deliveries: inout Deliveries) {
        s.tasks[id]?.inEngine = false  // the engine's transfer has ended
        guard let notModified = context.notModified,
              context.cache.refresh(url: context.url, partition: context.partition, notModified: notModified.headers, requestTime: context.requestTime,
                                    responseTime: context.responseTime ?? Date()) != nil else {
            startAgainWithoutCache(&s, task: id, &deliveries)
            return
        }
        s.tasks[id]?.cache?.role = .serving
        serveFromCache(&s, task: id, cache: context.cache, status: .revalidated, &deliveries)
    }

    /// Marks the task as answered by the cache and has its stored body read off the lock.
    private func serveFromCache(_ s: inout ServiceState, task id: Int, cache: URLCache, status: CacheStatus, _ deliveries: inout Deliveries) {
        guard let context = s.tasks[id]?.cache else { return }
        let (url, partition) = (context.url, context.partition)
        s.tasks[id]?.inEngine = false
        s.tasks[id]?.task.cacheStatus = status
        perform(transition(&s, task: id, .servedFromCache), task: id, &s, &deliveries)
        let fetchStart = Date()
        cache.readBody(url: url, partition: partition) { [self] stored in deliverFromCache(id, stored, fetchStart: fetchStart) }
    }

    /// Reports a stored response as a network response is reported (didReceiveResponse,
    /// didReceiveData, didCompleteWithError, with the same fields), and its localCache
    /// transaction for the task's metrics. On the cache's queue.
    private func deliverFromCache(_ id: Int, _ stored: (CachedResponse, Data)?, fetchStart: Date) {
        guard let (response, body) = stored else {
            let deliveries = state.withLock { s in
                var deliveries = Deliveries()
                guard s.tasks[id]?.cache?.role == .serving, s.tasks[id]?.task.state == .running else { return deliveries }
                startAgainWithoutCache(&s, task: id, &deliveries)
                return deliveries
            }
            deliveries.run()
            return
        }
        guard let (request, checksum, supplied) = state.withLock({ s -> (RequestInfo, Checksum?, LiveBody.Wakes?)? in
            guard let task = s.tasks[id]?.task, s.tasks[id]?.cache?.role == .serving else { return nil }
            let supplied = s.tasks[id]?.liveBody?.supply(body)  // its readers (and dataInEvents) read the stored body
            return (task.originalRequest, task.checksum, supplied)
        }) else { return }
        supplied?.run()
        let info = response.info
        handle(id, .transactions([.fromCache(url: request.url, method: request.method, statusCode: info.statusCode, fetchStart: fetchStart, end: Date())]))
        handle(id, .response(info))
        if !body.isEmpty {
            handle(id, .received(bytes: body.count, total: body.count, expected: info.expectedContentLength, bytesPerSecond: 0))
        }
        // A stored body is checked against the task's checksum as a fetched one is.
        handle(id, .completed(.verifiedBody(body, response: info, method: request.method, checksum: checksum)))
    }

    /// The stored response went between the decision and its use: the task is queued again and
    /// its next start skips the cache (returnCacheDataDontLoad then fails it).
    private func startAgainWithoutCache(_ s: inout ServiceState, task id: Int, _ deliveries: inout Deliveries) {
        guard let entry = s.tasks[id] else { return }
        if entry.task.originalRequest.cachePolicy == .returnCacheDataDontLoad {
            complete(&s, task: id, error: TaskError(.resourceUnavailable, "the cached response was removed before it could be used"), body: nil, &deliveries)
            return
        }
        s.tasks[id]?.inEngine = false
        s.tasks[id]?.cache?.bypassesCache = true
        s.scheduler.remove(taskId: id)
        enqueue(&s, task: id, &deliveries)
        changed(&s, task: id, persist: true, &deliveries)
        admit(&s, &deliveries)
    }

    /// `DELETE /v1/sessions/{sid}/cache`: empties the cache the session uses (URLCache.shared for
    /// a default session, so every default session's of the same token; nothing for a session
    /// without a cache) and deletes its files before it returns. Another token's part stays.
    public func removeCachedResponses(session id: String, owner: String?) throws {
        let session = try state.withLock { s in try visibleSession(s, id, owner) }
        guard let cache = urlCaches.cache(for: session) else { return }
        cache.removeAll(tenant: owner)
        cache.flush()
    }

    /// `DELETE /v1/cache` (admin): empties URLCache.shared, every tenant's part, and deletes its
    /// files before it returns. Ephemeral sessions' private caches are their own and stay.
    public func removeAllCachedResponses() {
        urlCaches.shared.removeAll()
        urlCaches.shared.flush()
    }
}
