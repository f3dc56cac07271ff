import ArgumentParser
import JSONModel
import Testing
@testable import transferctl

/// `get -i`'s aria2-style list, `--proxy`'s URL, a failed task's line, the resume hint's quoting
/// and `--retry`'s idea of a transient failure.
@Suite struct DownloadListTests {
    @Test func aListGivesURLsMirrorsAndPerURLOptions() throws {
        let text = """
            # comment
            http://a/x.iso\thttp://b/x.iso\thttp://c/x.iso
              out=disk.iso
              dir=images/
              header=X-One: 1
              user-agent=agent/2
              checksum=sha-256=abc
              split=4
              max-download-limit=1M

            http://a/y.bin\r
              dir=other
            """
        let items = try URLList.parse(text, name: "list")
        #expect(items.count == 2)
        #expect(items[0].url == "http://a/x.iso" && items[0].mirrors == ["http://b/x.iso", "http://c/x.iso"])
        #expect(items[0].output == "images/disk.iso")
        #expect(items[0].headers == [HeaderArgument(name: "X-One", value: "1"), HeaderArgument(name: "User-Agent", value: "agent/2")])
        #expect(items[0].checksum == "sha-256=abc" && items[0].segments == 4 && items[0].rate == 1 << 20)
        #expect(items[1].url == "http://a/y.bin" && items[1].output == "other/" && items[1].origin == "list:11")
        #expect(DownloadRun.target("other/", suggested: "y.bin", url: "http://a/y.bin") == "other/y.bin")
    }

    @Test func aBadListLineIsRefusedWithItsNumber() {
        for (text, message) in [
            ("  out=x\n", "list:1: an option line before any URL"),
            ("http://a/x\n  out=../x\n", "list:2: out must be a file name"),
            ("http://a/x\n  split=17\n", "list:2: split must be 1 to 16"),
            ("http://a/x\n  continue=true\n", "list:2: unknown option continue"),
            ("http://a/x\n  header=nocolon\n", "list:2: header must be"),
        ] {
            #expect(throws: CLIFailure.self) { try URLList.parse(text, name: "list") }
            do { _ = try URLList.parse(text, name: "list") } catch let failure as CLIFailure {
                #expect(failure.status == .usage && failure.message.hasPrefix(message), "\(failure.message)")
            } catch {}
        }
    }

    @Test func aProxyURLBecomesTheSessionsProxyDictionary() throws {
        let http = try #require(ProxyArgument(argument: "http://al%40ice:s3cret@proxy.local:3128"))
        #expect(http.dictionary == .object([
            "HTTPEnable": .bool(true), "HTTPProxy": .string("proxy.local"), "HTTPPort": .integer(3128),
            "HTTPProxyUsername": .string("al@ice"), "HTTPProxyPassword": .string("s3cret"),
            "HTTPSEnable": .bool(true), "HTTPSProxy": .string("proxy.local"), "HTTPSPort": .integer(3128),
            "HTTPSProxyUsername": .string("al@ice"), "HTTPSProxyPassword": .string("s3cret"),
        ]))
        let socks = try #require(ProxyArgument(argument: "socks5h://[::1]"))
        #expect(socks.kind == .socks && socks.host == "::1" && socks.port == 1080)
        #expect(ProxyArgument(argument: "plain.host")?.port == 1080)
        for bad in ["ftp://x", "http://:80", "http://h:0", "http://h:99999", "http://[::1"] {
            #expect(ProxyArgument(argument: bad) == nil, "\(bad)")
        }
    }

    @Test func aFailedTaskIsDrawnAsFailedNotDone() {
        let failed = ProgressLine(label: "x.bin", done: 0, total: nil, bytesPerSecond: 0, secondsRemaining: nil, finished: true, failed: true)
        #expect(failed.plain == "x.bin: 0 B, 0 B/s, FAILED")
        #expect(failed.percent == nil)
        #expect(!failed.bar(width: 80).contains("100%") && failed.bar(width: 80).hasSuffix("FAILED"))
        let done = ProgressLine(label: "x.bin", done: 5, total: nil, bytesPerSecond: 0, secondsRemaining: nil, finished: true)
        #expect(done.percent == 100 && done.plain.hasSuffix("done"))
    }

    @Test func theResumeHintQuotesWhatAShellWouldSplit() {
        #expect(DownloadRun.shellQuoted("out/file.bin") == "out/file.bin")
        #expect(DownloadRun.shellQuoted("my file's.bin") == "'my file'\\''s.bin'")
    }

    @Test func resumeFromTakesTheRunsProxyAndInsecureAndTheHintRepeatsThem() throws {
        let resume = try #require(try Transferctl.parseAsRoot(["resume-from", "f.resume", "-k", "--proxy", "http://u:p w@h:1"]) as? ResumeFromCommand)
        #expect(resume.sessionOptions.insecure && resume.sessionOptions.proxy?.port == 1)
        #expect(resume.sessionOptions.again == " -k --proxy 'http://u:p w@h:1'")
        #expect(resume.sessionOptions.configuration?["tlsVerifiesServerCertificate"] == .bool(false))
        let plain = try #require(try Transferctl.parseAsRoot(["resume-from", "f.resume"]) as? ResumeFromCommand)
        #expect(plain.sessionOptions.again == "" && plain.sessionOptions.configuration == nil)
    }

    @Test func retryTakesCurlsTransientFailures() {
        let refused = TaskFailure(code: -1004, name: "cannotConnectToHost", message: "", resumeData: nil)
        let missing = TaskFailure(code: -1100, name: "fileDoesNotExist", message: "", resumeData: nil)
        #expect(DownloadRun.isTransient(refused, status: nil))
        #expect(DownloadRun.isTransient(missing, status: 503))
        #expect(!DownloadRun.isTransient(missing, status: 404))
    }
}
