import ArgumentParser
import Testing
@testable import transferctl

@Suite struct ArgumentTests {
    @Test func getTakesCurlLikeOptions() throws {
        let parsed = try Transferctl.parseAsRoot(["get", "http://h/a.bin", "-o", "out.bin", "--limit-rate", "1M",
                                                  "--priority", "high", "-H", "X-A: b c", "--server", "http://d:1/", "--token", "t"])
        let get = try #require(parsed as? GetCommand)
        #expect(get.urls == ["http://h/a.bin"])
        #expect(get.download.output == "out.bin")
        #expect(get.limitRate?.bytesPerSecond == 1_048_576)
        #expect(get.priority == .named("high"))
        #expect(get.headers == [HeaderArgument(argument: "X-A: b c")!])
        #expect(get.connection.client.server == "http://d:1")
        #expect(get.connection.client.token == "t")
    }

    @Test func curlsUserAgentLoginAndRemoteName() throws {
        let get = try #require(try Transferctl.parseAsRoot(["get", "https://u:old@h:8443/a b?q#f", "-A", "probe/1.0", "-u", "alice:p@ss:w/rd", "-O"]) as? GetCommand)
        #expect(get.remoteName)
        let request = try #require(get.spec(DownloadItem(url: get.urls[0])).request)
        #expect(request.url == "https://alice:p%40ss%3Aw%2Frd@h:8443/a b?q#f", "the old login replaced, the new one encoded")
        #expect(request.headers == ["User-Agent": "probe/1.0"])
        #expect(UserArgument(argument: "nopassword") == nil && UserArgument(argument: ":x") == nil)
        #expect(throws: (any Error).self) { try Transferctl.parseAsRoot(["get", "http://h/x", "-O", "-o", "x"]) }
    }

    /// As with curl or git, the options every command takes may come before the command.
    @Test func globalOptionsMayComeBeforeTheCommand() throws {
        let arguments = ["--server", "http://d:1/", "--token=t", "--json", "ls", "--session", "s1"]
        #expect(GlobalOptions.movedAfterSubcommand(arguments) == ["ls", "--server", "http://d:1/", "--token=t", "--json", "--session", "s1"])
        let list = try #require(try Transferctl.parseAsRoot(GlobalOptions.movedAfterSubcommand(arguments)) as? ListCommand)
        #expect(list.connection.client.server == "http://d:1" && list.connection.client.token == "t" && list.connection.json)
        #expect(list.session == "s1")
        let get = try #require(try Transferctl.parseAsRoot(GlobalOptions.movedAfterSubcommand(["--server", "http://e:2", "get", "http://h/x", "-o", "x"])) as? GetCommand)
        #expect(get.connection.client.server == "http://e:2" && get.urls == ["http://h/x"])
        // Nothing to move, or only options: left for ArgumentParser to judge.
        #expect(GlobalOptions.movedAfterSubcommand(["get", "http://h/", "--server", "s"]) == ["get", "http://h/", "--server", "s"])
        #expect(GlobalOptions.movedAfterSubcommand(["--server", "s"]) == ["--server", "s"])
        #expect(Transferctl.run(["--server", "http://127.0.0.1:1", "sessions"]) == .serverUnreachable)
    }

    @Test(arguments: [
        ["get"],                                           // no URL
        ["get", "http://h/", "--limit-rate", "fast"],
        ["get", "http://h/", "--priority", "2"],
        ["get", "http://h/", "-o", "-", "--json"],         // both want stdout
        ["get", "http://h/", "-H", "no colon"],
        ["get", "http://h/a", "http://h/b", "-o", "x"],     // -o names one file
        ["get", "http://h/a", "http://h/b", "--checksum", "sha-256=00"],
        ["get", "http://h/", "-x", "17"],
        ["get", "http://h/", "--max-time", "0"],
        ["get", "http://h/", "--proxy", "ftp://p"],
        ["get", "http://h/", "--proxy", "http://p:3128", "--session", "s"],
        ["post", "http://h/"],                             // no body
        ["post", "http://h/", "--data", "x", "--file", "f"],
        ["show", "twelve"],
        ["priority", "1", "urgent"],
        ["nonsense"],
    ])
    func usageErrorsExitWithTwo(arguments: [String]) {
        #expect(Transferctl.run(arguments) == .usage)
    }

    @Test func helpExitsWithZeroAndListsTheExitStatuses() {
        #expect(Transferctl.run(["--help"]) == .success)
        #expect(Transferctl.helpMessage().contains("130  interrupted"))
    }

    @Test func priorities() {
        #expect(PriorityArgument(argument: "low") == .named("low"))
        #expect(PriorityArgument(argument: "0.9") == .value(0.9))
        #expect(PriorityArgument(argument: "1.5") == nil)
        #expect(String(decoding: APIClient.encode(TaskPriorityBody(priority: .value(0.25))), as: UTF8.self) == #"{"priority":0.25}"#)
    }

    @Test func headersBecomeTheAPIsObject() {
        let headers = ["Accept: text/plain", "X-Empty:", "accept: */*"].compactMap(HeaderArgument.init(argument:))
        #expect(headers.count == 3)
        #expect(HeaderArgument.object(headers) == ["Accept": "text/plain", "X-Empty": "", "accept": "*/*"])
        #expect(HeaderArgument.object([]) == nil)
    }

    @Test func taskBodiesLeaveUnsetFieldsOut() {
        let body = TaskCreateBody(kind: "download", request: RequestSpecBody(url: "http://h/a"), description: "d",
                                  bandwidthLimit: BandwidthLimitBody(downloadBytesPerSecond: 100))
        let json = String(decoding: APIClient.encode(body), as: UTF8.self)
        #expect(json.contains(#""request":{"url":"http://h/a"}"#))
        #expect(json.contains(#""bandwidthLimit":{"downloadBytesPerSecond":100}"#))
        #expect(!json.contains("priority"))
        #expect(!json.contains("resumeData"))
        let upload = RequestSpecBody(url: "http://h/", method: "PUT", body: .blob("abc"))
        #expect(String(decoding: APIClient.encode(upload), as: UTF8.self).contains(#""body":{"blob":"abc"}"#))
    }
}
