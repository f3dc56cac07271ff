import Foundation
import Testing
@testable import TransferModel
@testable import TransferStore
@testable import TransferEngine
@testable import TransferService

/// The tus client protocol as a value (`TusUpload`): answers in, next steps out, no I/O.
@Suite struct TusUploadStateTests {
    private static let creation = "http://127.0.0.1:1080/files/"

    private func fresh(length: Int = 1000) -> TusUpload {
        TusUpload(creationURL: Self.creation, length: length, state: ResumableUpload(protocol: .tus))
    }

    private func created(_ upload: inout TusUpload) {
        #expect(upload.next(after: .answered(status: 201, headers: ["Location": "/files/abc"])) == .perform(.send(from: 0), delay: 0))
    }

    @Test func createsThenPatchesAndCompletesWhenTheOffsetReachesTheLength() {
        var upload = fresh()
        #expect(upload.step == .create)
        created(&upload)
        #expect(upload.state.uploadURL == "http://127.0.0.1:1080/files/abc", "Location resolves against the creation URL")
        #expect(upload.next(after: .answered(status: 204, headers: ["upload-offset": "1000"])) == .complete)
        #expect(upload.state.offset == 1000)
        #expect(upload.failures == 0)
    }

    @Test func aKnownUploadURLStartsWithHeadAndSendsFromTheServersOffset() {
        var upload = TusUpload(creationURL: Self.creation, length: 1000, state: ResumableUpload(protocol: .tus, uploadURL: "http://127.0.0.1:1080/files/abc", offset: 100))
        #expect(upload.step == .locate)
        #expect(upload.next(after: .answered(status: 200, headers: ["Upload-Offset": "640", "Upload-Length": "1000"])) == .perform(.send(from: 640), delay: 0))
        #expect(upload.state.offset == 640, "the server's offset wins over the stored one")
    }

    @Test func aHeadThatFindsTheUploadCompleteCompletesTheTask() {
        var upload = TusUpload(creationURL: Self.creation, length: 1000, state: ResumableUpload(protocol: .tus, uploadURL: "http://h/files/abc"))
        #expect(upload.next(after: .answered(status: 200, headers: ["Upload-Offset": "1000"])) == .complete)
    }

    @Test func transportFailuresRetryWithHeadAndADoublingBackoffThenGiveUp() {
        var upload = fresh()
        created(&upload)
        let reset = TaskError(.networkConnectionLost, "Connection reset by peer")
        var delays: [Double] = []
        for _ in 1..<TusUpload.maxFailures {
            guard case .perform(let step, let delay) = upload.next(after: .failed(reset)) else {
                Issue.record("gave up too early")
                return
            }
            #expect(step == .locate)
            delays.append(delay)
            #expect(upload.next(after: .answered(status: 204, headers: ["Upload-Offset": "10"])) == .perform(.send(from: 10), delay: 0))
        }
        #expect(delays == [0.25, 0.5, 1, 2, 4])
        guard case .fail(let error) = upload.next(after: .failed(reset)) else {
            Issue.record("retries must be bounded")
            return
        }
        #expect(error.code == URLErrorCode.networkConnectionLost.rawValue)
        #expect(error.message.contains("failed \(TusUpload.maxFailures) times"))
    }

    @Test func aFailureThatIsNotTransientEndsAtOnce() {
        var upload = fresh()
        created(&upload)
        let gone = TaskError(.fileDoesNotExist, "the request body's file is gone")
        #expect(upload.next(after: .failed(gone)) == .fail(gone))
    }

    @Test(arguments: [404, 410, 403])
    func anUploadTheServerLostIsCreatedAgainFromZero(status: Int) {
        var upload = TusUpload(creationURL: Self.creation, length: 1000, state: ResumableUpload(protocol: .tus, uploadURL: "http://h/files/abc", offset: 500))
        #expect(upload.next(after: .answered(status: status, headers: [:])) == .perform(.create, delay: 0.25))
        #expect(upload.state.uploadURL == nil)
        #expect(upload.state.offset == 0)
    }

    @Test func anOffsetConflictAsksTheServerAgain() {
        var upload = fresh()
        created(&upload)
        #expect(upload.next(after: .answered(status: 409, headers: [:])) == .perform(.locate, delay: 0.25))
    }

    @Test func aPartialPatchSendsTheRestAndAPatchThatTakesNothingCountsAsAFailure() {
        var upload = fresh()
        created(&upload)
        #expect(upload.next(after: .answered(status: 204, headers: ["Upload-Offset": "300"])) == .perform(.send(from: 300), delay: 0))
        #expect(upload.failures == 0)
        #expect(upload.next(after: .answered(status: 204, headers: ["Upload-Offset": "300"])) == .perform(.locate, delay: 0.25))
        #expect(upload.failures == 1)
    }

    @Test func protocolViolationsFailWithBadServerResponse() {
        var noLocation = fresh()
        guard case .fail(let e1) = noLocation.next(after: .answered(status: 201, headers: [:])) else { Issue.record("no Location accepted"); return }
        #expect(e1.code == URLErrorCode.badServerResponse.rawValue)

        var version = fresh()
        guard case .fail(let e2) = version.next(after: .answered(status: 412, headers: ["Tus-Version": "0.2.2"])) else { Issue.record("412 accepted"); return }
        #expect(e2.message.contains("1.0.0") && e2.message.contains("0.2.2"))

        var beyond = fresh()
        created(&beyond)
        guard case .fail = beyond.next(after: .answered(status: 204, headers: ["Upload-Offset": "5000"])) else { Issue.record("an offset past the length accepted"); return }

        var otherLength = TusUpload(creationURL: Self.creation, length: 1000, state: ResumableUpload(protocol: .tus, uploadURL: "http://h/files/abc"))
        guard case .fail = otherLength.next(after: .answered(status: 200, headers: ["Upload-Offset": "10", "Upload-Length": "999"])) else { Issue.record("another upload's length accepted"); return }

        var media = fresh()
        created(&media)
        guard case .fail = media.next(after: .answered(status: 415, headers: [:])) else { Issue.record("415 accepted"); return }
    }

    @Test func anotherStatusToCreationIsTheServersVerdict() {
        var upload = fresh()
        #expect(upload.next(after: .answered(status: 413, headers: [:])) == .complete)
    }
}
