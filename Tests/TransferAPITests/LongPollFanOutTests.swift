import Foundation
import Testing
import TestSupport
import TransferAPI
import TransferModel
import TransferStore
import TransferEngine
import TransferService

/// A thousand clients long-polling one task: held without threads, all answered quickly when
/// the task changes. Runs alone in the process (exclusive), so the thread count is the daemon's.
@Suite struct LongPollFanOutTests {
    static let polls = 1000

    @Test func thousandHeldPollsCostNoThreadsAndAreAnsweredTogether() async throws {
        try await DaemonFixture.with(configure: { $0.httpThreads = 4 }, exclusive: true) { daemon in
            let task = try await daemon.dataTask(["url": "http://127.0.0.1:9/fan-out"], extra: ["state": "suspended"])
            let id = try #require(task.int("id"))
            let version = try #require(task.int("version"))
            // Warm up the paths a poll takes (server threads, a held poll, its timer).
            #expect(try await daemon.get("/v1/tasks/\(id)/progress?after=\(version)&wait=0.05").status == 200)
            let threadsBefore = processThreadCount()

            let request = "GET /v1/tasks/\(id)/progress?after=\(version)&wait=60 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
            let port = daemon.port
            let set = try await onThread { try RawPollSet(port: port, count: Self.polls, request: request) }
            defer { set.close() }
            try await waitUntilHeld(daemon, count: Self.polls)
            let threadsDuring = processThreadCount()
            #expect(daemon.daemon.service.heldLongPolls == Self.polls)

            // Meanwhile, one more poll with a short wait times out with the unchanged version.
            let start = ContinuousClock.now
            let timedOut = try await daemon.request("GET", "/v1/tasks/\(id)/progress?after=\(version)&wait=1", client: daemon.newClient())
            let waited = seconds(since: start)
            #expect(timedOut.status == 200)
            #expect(try timedOut.object().int("version") == version)
            #expect(waited >= 1 && waited < 4, "the short poll answered after \(waited) s")
            #expect(daemon.daemon.service.heldLongPolls == Self.polls)

            // The reader waits on all sockets before the change is made.
            let (readerStarted, signal) = AsyncStream<Void>.makeStream()
            async let answers = onThread { set.readAll(timeout: 30) { signal.finish() } }
            for await _ in readerStarted {}
            let sent = ContinuousClock.now
            let patched = try await daemon.patch("/v1/tasks/\(id)", json: ["description": "wake up"])
            let returned = ContinuousClock.now
            #expect(patched.status == 200)
            let newVersion = try #require(try patched.object().int("version"))
            #expect(newVersion > version)

            let results = try await answers
            let arrived = results.compactMap { $0 }
            #expect(arrived.count == Self.polls, "\(Self.polls - arrived.count) polls got no answer")
            let good = arrived.filter { answer in
                answer.status == 200
                    && ((try? JSONSerialization.jsonObject(with: answer.body)) as? [String: Any])?.int("version") == newVersion
            }
            #expect(good.count == Self.polls, "\(Self.polls - good.count) polls answered wrongly")

            func milliseconds(_ duration: Duration) -> Double {
                Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
            }
            // From the PATCH returning (an answer that came first counts as 0), and, stricter,
            // from the PATCH being sent.
            let afterReturn = arrived.map { max(0, milliseconds($0.arrival - returned)) }.sorted()
            let afterSend = arrived.map { milliseconds($0.arrival - sent) }.sorted()
            func percentile(_ values: [Double], _ p: Double) -> Double {
                values.isEmpty ? .nan : values[min(values.count - 1, Int((Double(values.count) * p).rounded(.up)) - 1)]
            }
            let format = { (value: Double) in String(format: "%.1f", value) }
            print("long-poll fan-out: \(arrived.count) polls answered, p50=\(format(percentile(afterReturn, 0.5))) "
                + "p99=\(format(percentile(afterReturn, 0.99))) max=\(format(afterReturn.last ?? .nan)) ms after the PATCH returned "
                + "(from the PATCH sent: p50=\(format(percentile(afterSend, 0.5))) p99=\(format(percentile(afterSend, 0.99))) "
                + "max=\(format(afterSend.last ?? .nan)) ms; PATCH took \(format(milliseconds(returned - sent))) ms), "
                + "threads before=\(threadsBefore) during=\(threadsDuring)")
            #expect((afterReturn.last ?? .infinity) < 500, "slowest answer \(afterReturn.last ?? -1) ms after the PATCH returned")
            #expect((afterSend.last ?? .infinity) < 500, "slowest answer \(afterSend.last ?? -1) ms after the PATCH was sent")
            #expect(threadsDuring - threadsBefore < 20, "threads: \(threadsBefore) before, \(threadsDuring) with \(Self.polls) polls held")
            #expect(daemon.daemon.service.heldLongPolls == 0)
        }
    }
}
