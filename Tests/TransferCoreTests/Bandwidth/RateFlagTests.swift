import Foundation
import Glibc
import TestSupport
import Testing

/// `--max-download-rate` / `--max-upload-rate` and their environment variables set the limits
/// the real `transferd` starts with (GET /v1/limits); bad values stop it with a clear message.
struct RateFlagTests {
    @Test func flagsAndEnvironmentSetTheStartingLimits() async throws {
        let folder = try TempDirectory(prefix: "transferd-coretests-rates")
        defer { folder.remove() }
        // The flag wins over its variable; the other variable applies.
        let daemon = try await DaemonProcess.start(
            dataDirectory: folder.path, arguments: ["--max-download-rate", "2097152"],
            environment: ["TRANSFERD_MAX_DOWNLOAD_RATE": "1", "TRANSFERD_MAX_UPLOAD_RATE": "65536"])
        let limits = try await TestHTTPClient(port: daemon.port).sendAsync("GET", "/v1/limits").jsonObject()
        #expect(limits["downloadBytesPerSecond"] as? Int == 2_097_152)
        #expect(limits["uploadBytesPerSecond"] as? Int == 65536)
        #expect((limits["background"] as? [String: Any])?["downloadBytesPerSecond"] is NSNull)
        daemon.kill(SIGTERM)
        #expect(await daemon.waitForExit(timeout: 10) == 0)
    }

    @Test(arguments: [
        (["--max-download-rate", "0"], [String: String](), "TRANSFERD_MAX_DOWNLOAD_RATE"),
        (["--max-upload-rate", "2000000000000"], [:], "TRANSFERD_MAX_UPLOAD_RATE"),
        ([], ["TRANSFERD_MAX_UPLOAD_RATE": "fast"], "TRANSFERD_MAX_UPLOAD_RATE"),
    ])
    func badRatesFailClearly(arguments: [String], environment: [String: String], mention: String) async throws {
        let folder = try TempDirectory(prefix: "transferd-coretests-rates")
        defer { folder.remove() }
        let result = try await DaemonProcess.run(["--listen", "127.0.0.1:0", "--data-dir", folder.path + "/data"] + arguments, environment: environment)
        #expect(result.exited && result.status != 0)
        #expect(result.stderr.contains(mention), "stderr: \(result.stderr)")
    }
}
