import Foundation
import JSONModel
import Logging
import Testing
import TestSupport
@testable import ClusterStore
import PostgreSQL
@testable import TransferModel
@testable import TransferStore

/// The `TaskStore` contract, held by both stores: the same writes, made through each, read back
/// alike by every read of the protocol (the SQLite `Store` is the reference, and the answers are
/// checked against what was written), and a PostgreSQL database kept for one daemon at a time.
@Suite struct StoreContractTests {
    private static let t0 = Date(timeIntervalSince1970: 1_800_000_000)

    private static func task(_ id: Int, session: String, owner: String?, state: TaskState, version: Int = 1,
                             completedAt: Date? = nil) -> TransferTask {
        let request = RequestInfo(url: "http://127.0.0.1/\(id)", method: "GET", headers: [:], bodyLength: nil,
                                  cachePolicy: .useProtocolCachePolicy, timeoutInterval: 60, networkServiceType: .default)
        var task = TransferTask(id: id, sessionId: session, kind: .download, state: state, priority: .default, description: "task \(id)",
                                request: request, owner: owner, now: t0)
        task.version = version
        task.completedAt = completedAt
        return task
    }

    private static func session(_ id: String, owner: String?, version: Int) -> Session {
        var session = Session(id: id, kind: .background, state: .active, configuration: SessionConfiguration(), createdAt: t0, version: version)
        session.owner = owner
        session.identifier = "com.example.\(id)"
        return session
    }

    private static func event(_ seq: Int, session: String, owner: String?) -> StoreOperation {
        var event = TaskEvent(seq: seq, sessionId: session, taskId: 1, type: .didReceiveData, time: t0, fields: ["n": .integer(Int64(seq))])
        event.owner = owner
        return .appendEvent(event)
    }

    private static func cookie(_ name: String, expires: Date) -> Cookie {
        Cookie(name: name, value: "v", domain: "127.0.0.1", path: "/", isHostOnly: true, expiresDate: expires,
               isSecure: false, isHTTPOnly: true, sameSitePolicy: .lax, createdAt: t0)
    }

    private static func space(realm: String?) -> ProtectionSpace {
        ProtectionSpace(host: "127.0.0.1", port: 8443, protocol: .https, realm: realm, authenticationMethod: .httpBasic)
    }

    private static func cached(_ status: Int) -> CachedResponse {
        CachedResponse(statusCode: status, headers: ["ETag": "\"\(status)\""], url: "http://127.0.0.1/c", varyingRequestHeaders: [:],
                       requestTime: t0, responseTime: t0)
    }

    /// The same writes for every store: queued ones in three commits, then the rows written at once.
    private static func fill(_ store: any TaskStore) throws {
        store.enqueue([
            .saveSession(session("s1", owner: "alice", version: 1)),
            .saveSession(session("s2", owner: nil, version: 1)),
            .saveTasks([
                .init(task: task(1, session: "s1", owner: "alice", state: .completed, completedAt: t0), feedSeq: 3),
                .init(task: task(2, session: "s1", owner: "alice", state: .running), feedSeq: 1),
                .init(task: task(3, session: "s2", owner: nil, state: .suspended), requestBody: Data([1, 2, 3]), feedSeq: 2),
            ]),
        ])
        try store.commit()
        let second: [StoreOperation] = [
            .saveSession(session("s1", owner: "alice", version: 2)),
            .saveTask(task(4, session: "s2", owner: nil, state: .completed, completedAt: t0.addingTimeInterval(10)), requestBody: nil, feedSeq: 5),
            .saveTask(task(5, session: "s1", owner: "alice", state: .completed, version: 3, completedAt: t0.addingTimeInterval(20)), requestBody: nil, feedSeq: 6),
            .saveTask(task(5, session: "s1", owner: "alice", state: .running, version: 2), requestBody: nil, feedSeq: 4),  // older: kept out
            .saveTask(task(6, session: "s2", owner: "bob", state: .completed, completedAt: t0.addingTimeInterval(30)), requestBody: nil, feedSeq: 7),
            .saveBody(taskId: 1, body: Data("body one".utf8)),
            .saveMetrics(taskId: 1, metrics: TaskMetrics(taskInterval: .init(start: MetricsDate(t0), duration: 1.5), redirectCount: 1, transactionMetrics: [])),
            .saveWebhookSecret(sessionId: "s1", secret: "whsec_1"),
            .saveSetting(name: "limits", json: #"{"a":1}"#),
            .saveSetting(name: "limits", json: #"{"a":2}"#),  // the later one stays
            .reserveTaskId(40),
            .reserveFeedSeqs(through: 30),
            .cookies([.save(owner: "alice", cookie("alive", expires: t0.addingTimeInterval(1_000_000_000))),
                      .save(owner: "", cookie("expired", expires: t0.addingTimeInterval(-1))),
                      .save(owner: "", cookie("gone", expires: t0.addingTimeInterval(1_000_000_000))),
                      .delete(owner: "", Cookie.Key(name: "gone", domain: "127.0.0.1", path: "/"))]),
        ]
        // Each owner's events together: PostgreSQL numbers a commit's events an owner at a time
        // (`GatheredRows.writeEvents`), so interleaved owners would read in another order there.
        let events: [StoreOperation] = (1...6).map { event($0, session: "s1", owner: $0 > 3 ? "alice" : nil) }
        store.enqueue(second + events + [event(7, session: "s2", owner: nil)])
        try store.commit()
        store.enqueue([.deleteTask(id: 6), event(8, session: "s1", owner: "alice"), .pruneEvents(sessionId: "s1", oldestKept: 2)])
        try store.commit()

        try store.replaceCredential(.init(ownerKey: "alice", space: space(realm: "r"), user: "u", sealedPassword: Data([1])))
        try store.replaceCredential(.init(ownerKey: "alice", space: space(realm: "r"), user: "u", sealedPassword: Data([2])))
        try store.replaceCredential(.init(ownerKey: "", space: space(realm: nil), user: "any-realm", sealedPassword: Data([3])))
        try store.replaceCredential(.init(ownerKey: "", space: space(realm: nil), user: "deleted", sealedPassword: Data([4])))
        try store.deleteCredentials(owner: "", [Credential.ID(space: space(realm: nil), user: "deleted")])

        try store.saveURLCacheRow(.init(key: "GET a", file: "fa", size: 10, response: cached(200), lastUsed: 5))
        try store.saveURLCacheRow(.init(key: "GET b", file: "fb", size: 20, response: cached(200), lastUsed: 3))
        try store.saveURLCacheRow(.init(key: "GET c", file: "fc", size: 30, response: cached(200), lastUsed: 1))
        try store.updateURLCacheResponse(file: "fb", cached(203), lastUsed: 7)
        try store.touchURLCacheRow(file: "fa", lastUsed: 9)
        try store.deleteURLCacheRow(file: "fc")

        try store.insertBlob(Blob(id: "b1", size: 3, sha256: "abc", createdAt: t0, owner: "alice"))
        try store.insertBlob(Blob(id: "b2", size: 4, sha256: "def", createdAt: t0 + 1, owner: nil))
        try store.deleteBlob(id: "b2")
    }

    /// Every read's answer as text, by read.
    private static func answers(_ store: any TaskStore) throws -> [String: String] {
        func ids(_ tasks: [StoredTaskJSON]) -> String { tasks.map { "\($0.id)" }.joined(separator: ",") }
        var a: [String: String] = [:]
        a["sessions"] = try store.loadSessions().map { "\($0.id) v\($0.version) \($0.owner ?? "-") \($0.identifier ?? "-")" }.joined(separator: "; ")
        a["tasks"] = try store.loadTasks().map { "\($0.0.id) \($0.0.state) v\($0.0.version) body \($0.1?.count ?? -1)" }.joined(separator: "; ")
        a["unfinished"] = try store.loadUnfinishedTasks().map { "\($0.0.id) body \($0.1?.count ?? -1)" }.joined(separator: "; ")
        a["storedTask 5"] = try store.storedTask(id: 5).map { "\($0.task.id) \($0.task.state) v\($0.task.version) feed \($0.feedSeq)" } ?? "nil"
        a["storedTask 99"] = try store.storedTask(id: 99).map { "\($0.task.id)" } ?? "nil"
        a["storedTaskJSON 1"] = try store.storedTaskJSON(id: 1).map { "\($0.owner ?? "-") \($0.state) \(String(decoding: $0.json, as: UTF8.self))" } ?? "nil"
        a["completed s1"] = ids(try store.completedTasks(session: "s1", after: 0, limit: 10))
        a["completed s1 after 1"] = ids(try store.completedTasks(session: "s1", after: 1, limit: 10))
        a["completed s2"] = ids(try store.completedTasks(session: "s2", after: 0, limit: 1))
        for (owner, limit) in [("alice", 10), ("alice", 1), ("bob", 10)] as [(String?, Int)] + [(nil, 10)] {
            a["changes \(owner ?? "-") \(limit)"] = try store.completedChanges(after: 0, through: 100, owner: owner, limit: limit)
                .map { "\($0.seq):\($0.task.id)" }.joined(separator: ",")
        }
        a["changes alice 3...5"] = try store.completedChanges(after: 3, through: 5, owner: "alice", limit: 10).map { "\($0.seq):\($0.task.id)" }.joined(separator: ",")
        a["completed before"] = try store.tasksCompleted(before: t0 + 15, limit: 10).map { "\($0.id)" }.joined(separator: ",")
        a["summary"] = try store.completedTaskSummary()
            .map { "\($0.owner ?? "-") \($0.kind) \($0.schedulingClass) \($0.tasks) \($0.heldBytes)" }.sorted().joined(separator: "; ")
        a["feedSeqFloor"] = "\(try store.feedSeqFloor())"
        a["existing"] = try store.existingTaskIds(among: [1, 2, 6, 99, 4]).sorted().map(String.init).joined(separator: ",")
        a["existing none"] = try store.existingTaskIds(among: []).map(String.init).joined(separator: ",")
        // By the number each event was queued with (its `n`): PostgreSQL numbers a session's
        // events when it commits them (per session, in commit order), SQLite keeps the given ones.
        a["events"] = try store.loadRecentEvents(limit: 3).map { event -> String in
            guard case .integer(let n)? = event.fields["n"] else { return "?" }
            return "\(event.sessionId) \(n) \(event.owner ?? "-")"
        }
            .sorted().joined(separator: "; ")
        a["maxTaskId"] = "\(try store.maxTaskId())"
        a["body 1"] = try store.body(taskId: 1).map { String(decoding: $0, as: UTF8.self) } ?? "nil"
        a["body 2"] = try store.body(taskId: 2).map { String(decoding: $0, as: UTF8.self) } ?? "nil"
        a["metrics 1"] = try store.metrics(taskId: 1).map { "\($0.redirectCount) \($0.taskInterval.duration)" } ?? "nil"
        a["cookies"] = try store.loadCookies(now: t0).map { "\($0.key): \($0.value.map { "\($0.name) \($0.isHTTPOnly) \($0.sameSitePolicy?.rawValue ?? "-")" })" }.sorted().joined(separator: "; ")
        a["setting"] = "\(try store.setting("limits") ?? "nil") \(try store.setting("never") ?? "nil")"
        a["secrets"] = try store.loadWebhookSecrets().map { "\($0.key)=\($0.value)" }.sorted().joined(separator: ",")
        a["credentials"] = try store.loadCredentialRows().map { "\($0.ownerKey) \($0.space.realm ?? "-") \($0.user) \([UInt8]($0.sealedPassword))" }.joined(separator: "; ")
        a["url cache"] = try store.loadURLCacheRows().map { "\($0.key) \($0.file) \($0.size) \($0.response.statusCode) \($0.lastUsed)" }.joined(separator: "; ")
        a["blobs"] = try store.loadBlobs().map { "\($0.id) \($0.owner ?? "-") \($0.size) \($0.sha256) \($0.createdAt.timeIntervalSince1970)" }.joined(separator: "; ")
        a["blob b2"] = try store.blob(id: "b2").map(\.id) ?? "nil"
        return a
    }

    /// What the writes must read as: the reference the SQLite store is held to as well.
    private static let expected: [String: String] = [
        "sessions": "s1 v2 alice com.example.s1; s2 v1 - com.example.s2",
        "unfinished": "2 body -1; 3 body 3",
        "storedTask 5": "5 completed v3 feed 6",
        "storedTask 99": "nil",
        "completed s1": "1,5",
        "completed s1 after 1": "5",
        "completed s2": "4",
        "changes alice 10": "3:1,5:4,6:5",
        "changes alice 1": "3:1",
        "changes bob 10": "5:4",
        "changes - 10": "5:4",
        "changes alice 3...5": "5:4",
        "completed before": "1,4",
        "feedSeqFloor": "30",
        "existing": "1,2,4",
        "existing none": "",
        "events": "s1 5 alice; s1 6 alice; s1 8 alice; s2 7 -",  // s1's newest 3 of 1...6 and 8
        "maxTaskId": "40",
        "body 1": "body one",
        "body 2": "nil",
        "metrics 1": "1 1.5",
        "cookies": "alice: [\"alive true lax\"]",
        "secrets": "s1=whsec_1",
        "setting": #"{"a":2} nil"#,
        "credentials": "alice r u [2];  - any-realm [3]",
        "url cache": "GET b fb 20 203 7.0; GET a fa 10 200 9.0",  // least recently used first
        "blobs": "b1 alice 3 abc 1800000000.0",
        "blob b2": "nil",
    ]

    @Test func bothStoresAnswerEveryReadAlikeAndAsWritten() throws {
        let folder = try TempDirectory()
        defer { folder.remove() }
        let sqlite = try Store(dataDirectory: folder.path)
        try Self.fill(sqlite)
        let reference = try Self.answers(sqlite)
        sqlite.close()

        let scratch = try ScratchDatabase()
        defer { scratch.drop() }
        let postgres = try PostgresStore(url: scratch.url, instruments: nil, logger: Logger(label: "test"))
        try Self.fill(postgres)
        let answers = try Self.answers(postgres)
        postgres.close()

        for (read, value) in Self.expected.sorted(by: { $0.key < $1.key }) {
            #expect(reference[read] == value, "SQLite: \(read)")
        }
        #expect(reference.keys.sorted() == answers.keys.sorted())
        for read in reference.keys.sorted() {
            #expect(answers[read] == reference[read], "PostgreSQL: \(read)")
        }
    }

    /// A read on a connection the server ended (a restart, a failover) fails as a
    /// `StoreReadFailure`, which the API answers with 503; the next read on that connection makes
    /// it again and succeeds. Nothing read is lost: the row was committed.
    @Test func aReadTheServerCutOffIsAReadFailureAndTheNextReadReconnects() throws {
        let scratch = try ScratchDatabase()
        defer { scratch.drop() }
        let store = try PostgresStore(url: scratch.url, instruments: nil, logger: Logger(label: "test"))
        defer { store.close() }
        store.enqueue(.saveTasks([.init(task: Self.task(1, session: "s", owner: nil, state: .suspended), feedSeq: 1)]))
        try store.commit()
        #expect(try store.storedTask(id: 1)?.task.id == 1)
        let admin = try scratch.connect()
        defer { admin.close() }
        // Every other connection to the scratch database: the store's readers among them.
        try admin.run("SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()")
        var failures = 0, answer: Int?
        for _ in 0..<(PostgresStore.readConnections * 2) where answer == nil {
            do {
                answer = try store.storedTask(id: 1)?.task.id
            } catch is StoreReadFailure {
                failures += 1
            }
        }
        #expect(failures >= 1, "a read on a cut connection failed")
        #expect(failures <= PostgresStore.readConnections, "each connection failed once at most, then reconnected")
        #expect(answer == 1)
    }

    /// Several daemons open one database (the cluster: each task's writes are fenced by its lease).
    @Test func severalNodesOpenOneDatabaseAtOnce() throws {
        let scratch = try ScratchDatabase()
        defer { scratch.drop() }
        let first = try PostgresStore(url: scratch.url, instruments: nil, logger: Logger(label: "test"))
        first.enqueue(.reserveTaskId(7))
        try first.commit()
        let other = try PostgresStore(url: scratch.url, instruments: nil, logger: Logger(label: "test"))
        #expect(try other.maxTaskId() == 7)
        other.close()
        first.close()
        first.close()  // idempotent
        #expect(!first.isOpen)
        let second = try PostgresStore(url: scratch.url, instruments: nil, logger: Logger(label: "test"))
        defer { second.close() }
        #expect(try second.maxTaskId() == 7)
        #expect(second.location == scratch.url)
    }
}
