import Curl
import Testing
@testable import TransferModel
@testable import TransferStore
@testable import TransferEngine
@testable import TransferService

/// The engine commands of issue 4 reach a transfer: an `EngineLoop` driven on the test's thread
/// (no curl_multi_perform, so nothing connects). The stream weight is only proven accepted by
/// libcurl here; without an HTTP/2 origin it is not proven on the wire.
struct EngineCommandTests {
    struct Ignore: TransferObserver {
        func transfer(_ taskId: Int, _ update: TransferUpdate) {}
    }

    static func job(_ id: Int, priority: Double, type: NetworkServiceType = .default) -> TransferJob {
        let request = RequestInfo(url: "http://127.0.0.1:9/never", method: "GET", headers: [:], bodyLength: nil, cachePolicy: .useProtocolCachePolicy, timeoutInterval: 60, networkServiceType: type)
        var job = TransferJob(taskId: id, request: request, body: nil, resourceTimeout: 60, maxBodySize: 1 << 20, startPaused: true)
        job.priority = priority
        return job
    }

    @Test func priorityLimitsAndMarkingReachTheTransfer() throws {
        let loop = EngineLoop(multi: try MultiHandle(), observer: Ignore())
        defer {
            for id in Array(loop.transfers.keys) { loop.apply(.cancel(taskId: id, keepPartial: false)) }
            loop.multi.close()
        }
        loop.apply(.start(Self.job(7, priority: 0.25, type: .voice)))
        let transfer = try #require(loop.transfers[7])
        #expect(transfer.streamWeight == 65)
        loop.apply(.setPriority(taskId: 7, priority: 1))
        #expect(transfer.streamWeight == 256)
        loop.apply(.setPriority(taskId: 7, priority: 0))
        #expect(transfer.streamWeight == 1)

        loop.apply(.setBandwidthLimit(taskId: 7, BandwidthLimit(downloadBytesPerSecond: 1000)))
        #expect(transfer.throttle.own[.download]?.rate == 1000)
        #expect(transfer.throttle.own[.upload] == nil)
        loop.apply(.setBandwidthLimit(taskId: 7, nil))
        #expect(transfer.throttle.own.isEmpty)

        let limits = BandwidthLimits(global: BandwidthLimit(uploadBytesPerSecond: 5000), background: BandwidthLimit(downloadBytesPerSecond: 100))
        loop.apply(.setLimits(limits))
        #expect(loop.governor.limits == limits)

        // A limit in force when a download starts sizes its receive buffer (a tenth of a second).
        #expect(loop.governor.startingRate(.download, own: nil, background: true) == 100)
        #expect(loop.governor.startingRate(.download, own: BandwidthLimit(downloadBytesPerSecond: 50), background: true) == 50)
        #expect(loop.governor.startingRate(.download, own: nil, background: false) == nil)
    }

    @Test func libcurlTakesTheOptions() throws {
        let handle = try EasyHandle()
        for weight in [1, 129, 256] { try handle.set(.streamWeight(weight)) }
        try handle.set(.dscp(46))
        try handle.set(.dscp(nil))
    }
}
