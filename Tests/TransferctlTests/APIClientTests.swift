import Testing
@testable import transferctl
internal import JSONModel

@Suite struct APIClientTests {
    @Test func errorStatusesMapToExitStatuses() {
        let body = Array(#"{"error":{"code":"not_found","message":"no task 99"}}"#.utf8)
        #expect(APIResponse.failure(status: 404, body: body) == CLIFailure(.notFound, "not_found: no task 99 (HTTP 404)"))
        #expect(APIResponse.failure(status: 401, body: []).status == .unauthorized)
        #expect(APIResponse.failure(status: 409, body: []).status == .refused)
        #expect(APIResponse.failure(status: 503, body: Array("<html>".utf8)).message == "the daemon answered HTTP 503")
    }

    @Test func headersAreFoundWhateverTheirCase() {
        let response = APIResponse(status: 200, headerLines: ["HTTP/1.1 200 OK", "Content-Disposition: attachment; filename=a", "X: 1"], body: [])
        #expect(response.header("content-disposition") == "attachment; filename=a")
        #expect(response.header("Missing") == nil)
    }

    @Test func pathsAndQueriesAreEncoded() {
        #expect(APIClient.path("v1", "sessions", "a b/c", "tasks") == "/v1/sessions/a%20b%2Fc/tasks")
        #expect(APIClient.query([("after", "3"), ("cursor", nil), ("state", "a&b=é")]) == "?after=3&state=a%26b%3D%C3%A9")
        #expect(APIClient.query([("cursor", nil)]) == "")
        #expect(APIClient(server: "http://h:1//", token: nil).server == "http://h:1")
    }

    @Test(arguments: [
        ("http://h/files/100MiB.bin", "100MiB.bin"), ("http://h/a/b.txt?x=1#f", "b.txt"), ("http://h/", "index.html"),
        ("http://h", "index.html"), ("http://h/dir/..", "index.html"),
    ])
    func defaultNamesComeFromTheURL(url: String, name: String) {
        #expect(DownloadRun.fileName(fromURL: url) == name)
    }

    @Test func theSuggestedFilenameWinsButStaysInTheCurrentFolder() {
        #expect(DownloadRun.fileName(suggested: "report.pdf", url: "http://h/x") == "report.pdf")
        #expect(DownloadRun.fileName(suggested: "../../etc/passwd", url: "http://h/x") == "passwd")
        #expect(DownloadRun.fileName(suggested: "Unknown", url: "http://h/x.bin") == "x.bin")
        #expect(DownloadRun.fileName(suggested: nil, url: "http://h/x.bin") == "x.bin")
    }

    @Test func eventLinesPutTheCommonFieldsFirst() {
        let event = JSONValue.object(["seq": .integer(7), "time": .string("2025-01-01T00:00:00Z"), "taskId": .integer(3),
                                      "type": .string("didWriteData"), "bytesWritten": .integer(10), "sessionId": .string("s")])
        #expect(EventsCommand.line(event) == #"7 2025-01-01T00:00:00Z task 3 didWriteData {"bytesWritten":10}"#)
        let sessionEvent = JSONValue.object(["seq": .integer(8), "time": .string("t"), "taskId": .null, "type": .string("didBecomeInvalid")])
        #expect(EventsCommand.line(sessionEvent) == "8 t session didBecomeInvalid")
    }

    /// A real connection attempt to a closed port of 127.0.0.1 (port 1: nothing listens there).
    @Test func anUnreachableDaemonIsExitThree() {
        #expect(Transferctl.run(["sessions", "--server", "http://127.0.0.1:1"]) == .serverUnreachable)
    }
}
