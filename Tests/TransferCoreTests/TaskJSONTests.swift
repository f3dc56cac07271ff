import Foundation
import Testing
import JSONModel
@testable import TransferModel
@testable import TransferStore
@testable import TransferEngine
@testable import TransferService

/// `TaskJSONWriter` writes the very bytes JSONCoding.encoder writes for a task, served and
/// stored, over tasks in every shape the service makes (and awkward strings, numbers, dates).
@Suite struct TaskJSONTests {
    /// The Codable form, the reference.
    private static func reference(_ task: TransferTask, stored: Bool) throws -> String {
        struct Stored: Encodable {
            let task: TransferTask
            func encode(to encoder: any Encoder) throws { try task.encode(to: encoder, stored: true) }
        }
        let data = stored ? try JSONCoding.encoder.encode(Stored(task: task)) : try JSONCoding.encoder.encode(task)
        return String(decoding: data, as: UTF8.self)
    }

    private static func request(url: String = "http://127.0.0.1:8080/a/b?c=d", headers: [String: String] = [:]) -> RequestInfo {
        RequestInfo(url: url, method: "GET", headers: headers, bodyLength: nil, cachePolicy: .useProtocolCachePolicy,
                    timeoutInterval: 60, networkServiceType: .default)
    }

    static var tasks: [TransferTask] {
        var plain = TransferTask(id: 1, sessionId: "shared", kind: .data, state: .running, priority: .default, description: nil,
                                 request: request(), owner: nil, now: Date(timeIntervalSince1970: 1_700_000_000.999))
        var all = [plain]

        plain.id = 123_456_789
        plain.owner = "fingerprint/with+slash"
        plain.description = "quote \" backslash \\ slash / tab \t newline \n bell \u{7} nul \u{0} é ☃ 🚀"
        plain.priority = TaskPriority(value: 0.123456789)
        plain.originalRequest = request(url: "https://example.com/ä?q=\"x\"", headers: ["Zeta": "1", "alpha": "2", "Content-Type": "application/json", "X-Ünï": "v\u{1}"])
        plain.originalRequest.bodyLength = 1_048_576
        plain.originalRequest.timeoutInterval = 0.5
        plain.originalRequest.method = "POST"
        plain.originalRequest.cachePolicy = .reloadIgnoringLocalCacheData
        plain.originalRequest.networkServiceType = .background
        all.append(plain)

        var running = plain
        running.kind = .download
        running.lifecycle = TaskMachine(restoring: running.state, phase: .transferring)
        running.currentRequest = running.originalRequest
        running.startedAt = Date(timeIntervalSince1970: 1_700_000_001.5)
        running.progress.bytesReceived = 5_000
        running.progress.bytesExpectedToReceive = 20_000
        running.progress.bytesSent = 12
        running.progress.bytesExpectedToSend = 12
        running.progress.bytesPerSecond = 1234.5
        running.destination = "dir/file.bin"
        running.resume = ResumeState(offset: 5_000, etag: "\"abc\"", lastModified: nil, expectedLength: 20_000)
        all.append(running)

        var done = running
        done.lifecycle = TaskMachine(restoring: .completed, phase: .done)
        done.completedAt = Date(timeIntervalSince1970: 4_102_444_799.25)  // 2099-12-31T23:59:59Z
        done.response = ResponseInfo(statusCode: 206, headers: ["ETag": "\"abc\"", "Content-Length": "15000"], url: "https://example.com/ä")
        done.error = TaskError(.cancelled, "cancelled")
        done.cacheStatus = .revalidated
        done.location = "/data/files/1/file.bin"
        done.checksum = Checksum(algorithm: .sha512, hex: String(repeating: "Ab", count: 64))
        done.digest = TaskDigest(values: ["sha-512": String(repeating: "ab", count: 64), "sha-256": String(repeating: "0f", count: 32), "md5": String(repeating: "1", count: 32)])
        done.responseDisposition = ResponseDisposition(default: .cancel, rules: [
            .init(when: .init(minLength: 10, mimeType: "video/*", statusCodes: [200]), then: .becomeDownload),
        ])
        done.version = 99
        done.decisions = DecisionSet([.response, .challenge, .cache])
        done.progress.bytesPerSecond = 1e-7
        all.append(done)

        var upload = plain
        upload.kind = .upload
        upload.streamedBody = [.file(path: "/uploads/a b.bin", size: 10), .bytes(Data("--x\r\n".utf8))]
        upload.bodyStream = BodyStreamState()
        upload.resumable = ResumableUpload(protocol: .tus, filename: "a b.bin")
        upload.progress.bytesPerSecond = 3e20
        upload.createdAt = Date(timeIntervalSince1970: 0)
        upload.decisions = DecisionSet([.redirect])
        all.append(upload)
        return all
    }

    @Test(arguments: [false, true])
    func writesTheBytesOfTheCodableForm(stored: Bool) throws {
        for task in Self.tasks {
            let fast = String(decoding: task.jsonData(stored: stored), as: UTF8.self)
            let reference = try Self.reference(task, stored: stored)
            #expect(fast == reference, "first difference at \(zip(fast.utf8, reference.utf8).prefix { $0 == $1 }.count): \(reference.utf8.dropFirst(zip(fast.utf8, reference.utf8).prefix { $0 == $1 }.count).prefix(60).map { Character(UnicodeScalar($0)) })")
        }
    }

    @Test func datesAcrossTheRangeMatch() throws {
        var task = Self.tasks[0]
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<500 {
            task.createdAt = Date(timeIntervalSince1970: Double.random(in: -1e9...4e9, using: &generator))
            let fast = String(decoding: task.jsonData(), as: UTF8.self)
            #expect(fast == (try Self.reference(task, stored: false)))
        }
    }

    @Test func aListIsTheTasksUnderItsKey() throws {
        let tasks = Self.tasks
        struct List: Encodable { let tasks: [TransferTask] }
        let fast = String(decoding: TransferTask.jsonList(tasks, under: "tasks"), as: UTF8.self)
        #expect(fast == String(decoding: try JSONCoding.encoder.encode(List(tasks: tasks)), as: UTF8.self))
    }
    static var events: [TaskEvent] {
        let done = tasks[3]
        return [
            TaskEvent(seq: 1, sessionId: "shared", taskId: nil, type: .didBecomeInvalid, time: Date(timeIntervalSince1970: 1_700_000_000.5), fields: [:]),
            TaskEvent(seq: 42, sessionId: "s/é", taskId: 7, type: .didReceiveResponse, time: Date(timeIntervalSince1970: 0),
                      fields: ["response": done.response!.jsonValue]),
            TaskEvent(seq: 43, sessionId: "shared", taskId: 7, type: .didCompleteWithError, time: Date(timeIntervalSince1970: 4_102_444_799),
                      fields: ["error": done.error!.jsonValue, "aa": .array([.null, .bool(true), .bool(false), .integer(-5), .number(0.25), .number(3e20), .number(1e-7)]),
                               "zz": .object(["b": .string("quote \" \u{1} ☃"), "a": .object([:]), "B": .array([])]),
                               // a field named like a common key is not served twice
                               "seq": .integer(99)]),
            // Field names that sort between each pair of common keys, and integers at the edges.
            TaskEvent(seq: 44, sessionId: "shared", taskId: 8, type: .didWriteData, time: Date(timeIntervalSince1970: 1),
                      fields: ["sf": .integer(1), "taskIdx": .integer(Int64.min), "ti": .integer(Int64.max), "u": .null,
                               "s": .integer(0), "seqs": .integer(-1), "typ": .bool(true)]),
        ]
    }

    /// Strings that need escapes are escaped byte for byte as JSONEncoder escapes them: every
    /// ASCII character alone and among others, and text beyond ASCII beside them.
    @Test func escapedStringsAreTheBytesOfTheCodableForm() throws {
        var texts = (0..<128).map { String(UnicodeScalar(UInt8($0))) }
        texts += ["an \"ETag\"", "back\\slash", "tab\tline\nfeed\u{1}\u{1f}\u{7f}", "é ☃ \"😀\" /path", "\u{0}", "\"\u{2028}\u{2029}"]
        for text in texts {
            var writer = TaskJSONWriter()
            writer.string(text)
            let written = writer.data()
            let expected = String(decoding: try JSONCoding.encoder.encode(text), as: UTF8.self)
            #expect(String(decoding: written, as: UTF8.self) == expected, "\(Array(text.utf8))")
        }
    }

    /// The escape check reads eight bytes at a time: a byte that needs an escape is found at
    /// every place in a word and past the last whole word, and bytes beyond ASCII (whose high
    /// bits are set) never look like one.
    @Test func theWordWiseEscapeCheckFindsEveryByteThatNeedsOne() throws {
        let specials: [UInt8] = Array(0..<0x20) + [0x22, 0x5C]
        let plain = Array("abcdefghijklmnopqrstuvwx".utf8)
        for special in specials {
            for position in plain.indices {
                var bytes = plain
                bytes[position] = special
                let text = String(decoding: bytes, as: UTF8.self)
                let found = bytes.withUnsafeBufferPointer { TaskJSONWriter.needsEscapes($0) }
                #expect(found, "byte \(special) at \(position)")
                var writer = TaskJSONWriter()
                writer.string(text)
                let written = writer.data()
                #expect(String(decoding: written, as: UTF8.self) == String(decoding: try JSONCoding.encoder.encode(text), as: UTF8.self))
            }
        }
        for text in ["", "a", "é☃😀 ~!#$%&'()*+,-./0123456789:;<=>?@[]^_`{|}\u{7f}", String(repeating: "ü", count: 40), String(repeating: "~", count: 17)] {
            let found = Array(text.utf8).withUnsafeBufferPointer { TaskJSONWriter.needsEscapes($0) }
            #expect(!found, "\(text)")
        }
    }

    @Test func eventsAndPagesAreTheBytesOfTheCodableForm() throws {
        for event in Self.events {
            #expect(String(decoding: event.jsonData(), as: UTF8.self) == String(decoding: try JSONCoding.encoder.encode(event), as: UTF8.self))
        }
        let page = EventPage(events: Self.events, next: 44)
        #expect(String(decoding: page.jsonData(), as: UTF8.self) == String(decoding: try JSONCoding.encoder.encode(page), as: UTF8.self))
        let empty = EventPage(events: [], next: 0)
        #expect(String(decoding: empty.jsonData(), as: UTF8.self) == String(decoding: try JSONCoding.encoder.encode(empty), as: UTF8.self))
    }

    /// The event fields built directly equal what a round trip through JSON text makes.
    @Test func directEventFieldsEqualTheRoundTrip() {
        var response = ResponseInfo(statusCode: 200, headers: ["Content-Type": "text/plain; charset=UTF-8", "Content-Length": "5"], url: "http://127.0.0.1/a")
        #expect(response.jsonValue == JSONValue(encoding: response))
        response = ResponseInfo(statusCode: 304, headers: [:], url: "http://127.0.0.1/")
        #expect(response.jsonValue == JSONValue(encoding: response))
        var error = TaskError(.cancelled, "cancelled")
        #expect(error.jsonValue == JSONValue(encoding: error))
        error = TaskError(.networkConnectionLost, "lost", reason: "network_policy")
        error.resumeData = "abc="
        #expect(error.jsonValue == JSONValue(encoding: error))
        for duration in [0, 1, 0.001234, 2.5, 86_400] as [Double] {
            let metrics = TaskMetrics(taskInterval: .init(start: MetricsDate(Date(timeIntervalSince1970: 1_700_000_000.123)), duration: duration),
                                      redirectCount: 1, transactionMetrics: [])
            #expect(metrics.eventFields["taskInterval"] == JSONValue(encoding: metrics.taskInterval))
        }
    }
    @Test func metricsAreTheBytesOfTheCodableForm() throws {
        let start = Date(timeIntervalSince1970: 1_700_000_000.123)
        let cached = TransactionMetrics.fromCache(url: "http://127.0.0.1/a?b=\"c\"", method: "GET", statusCode: 200, fetchStart: start, end: start.addingTimeInterval(0.0015))
        var network = cached
        network.resourceFetchType = TransactionMetrics.networkLoad
        network.response = nil
        for (offset, path) in [\TransactionMetrics.domainLookupStartDate, \.domainLookupEndDate, \.connectStartDate, \.connectEndDate,
                               \.secureConnectionStartDate, \.secureConnectionEndDate, \.requestStartDate, \.requestEndDate,
                               \.responseStartDate, \.responseEndDate].enumerated() {
            network[keyPath: path] = MetricsDate(start.addingTimeInterval(Double(offset) * 0.001))
        }
        network.networkProtocolName = "http/1.1"
        network.negotiatedTLSProtocolVersion = .TLSv13
        network.negotiatedTLSCipherSuite = 4865
        network.isProxyConnection = true
        network.isReusedConnection = true
        network.remoteAddress = "127.0.0.1"
        network.remotePort = 8443
        network.localAddress = "::1"
        network.localPort = 50_000
        network.countOfRequestHeaderBytesSent = 120
        network.countOfRequestBodyBytesSent = 7
        network.countOfResponseHeaderBytesReceived = 230
        network.countOfResponseBodyBytesReceived = 16_384
        for transactions in [[], [cached], [network, cached]] {
            for duration in [0, 0.25, 12.000_001] as [Double] {
                let metrics = TaskMetrics(taskInterval: .init(start: MetricsDate(start), duration: duration), redirectCount: transactions.count, transactionMetrics: transactions)
                #expect(String(decoding: metrics.jsonData(), as: UTF8.self) == String(decoding: try JSONCoding.encoder.encode(metrics), as: UTF8.self))
                // The stored form leaves the nulls out and decodes as the same metrics.
                let stored = metrics.storedJSONData()
                #expect(!String(decoding: stored, as: UTF8.self).contains("null"))
                #expect(stored.count <= metrics.jsonData().count)
                #expect(try JSONCoding.decoder.decode(TaskMetrics.self, from: stored) == (try JSONCoding.decoder.decode(TaskMetrics.self, from: metrics.jsonData())))
            }
        }
        // A transaction without a response or phases: its stored form is shorter.
        let bare = TaskMetrics(taskInterval: .init(start: MetricsDate(start), duration: 1), redirectCount: 0, transactionMetrics: [{
            var t = cached
            t.response = nil
            t.requestStartDate = nil
            return t
        }()])
        #expect(bare.storedJSONData().count < bare.jsonData().count)
    }
}
