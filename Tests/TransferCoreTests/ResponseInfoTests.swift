import Foundation
import Testing
@testable import TransferModel
@testable import TransferStore
@testable import TransferEngine
@testable import TransferService

/// `ResponseInfo`: the HTTPURLResponse properties derived from the headers and URL.
@Suite struct ResponseInfoTests {
    private func info(_ headers: [String: String], url: String = "http://example.com/path/file.txt") -> ResponseInfo {
        ResponseInfo(statusCode: 200, headers: headers, url: url)
    }

    @Test(arguments: [
        ("text/HTML; charset=\"UTF-8\"", "text/html", "utf-8"),
        ("text/plain;charset=ISO-8859-1", "text/plain", "iso-8859-1"),
        ("text/plain; format=flowed; Charset=utf-8", "text/plain", "utf-8"),
        ("application/json", "application/json", nil),
        ("Application/Octet-Stream ; ", "application/octet-stream", nil),
    ] as [(String, String, String?)])
    func mimeTypeAndCharset(contentType: String, mimeType: String, charset: String?) {
        let response = info(["Content-Type": contentType])
        #expect(response.mimeType == mimeType)
        #expect(response.textEncodingName == charset)
    }

    @Test func noContentTypeMeansNoMimeType() {
        let response = info([:])
        #expect(response.mimeType == nil)
        #expect(response.textEncodingName == nil)
        #expect(info(["Content-Type": ""]).mimeType == nil)
    }

    @Test func headerNamesAreCaseInsensitive() {
        let response = info(["content-type": "image/png", "CONTENT-LENGTH": "42"])
        #expect(response.mimeType == "image/png")
        #expect(response.expectedContentLength == 42)
        #expect(ResponseInfo.value(of: "Content-Type", in: ["cOnTeNt-TyPe": "x"]) == "x")
    }

    @Test(arguments: [
        ("1234", 1234 as Int?), ("0", 0), ("abc", nil), ("", nil), ("-", nil),
    ] as [(String, Int?)])
    func contentLength(value: String, expected: Int?) {
        #expect(info(["Content-Length": value]).expectedContentLength == expected)
    }

    @Test func contentLengthAbsentIsUnknown() {
        #expect(info([:]).expectedContentLength == nil)
    }

    @Test(arguments: [
        // Content-Disposition wins.
        ("attachment; filename=\"report 2024.pdf\"", "http://h/x/y.bin", "report 2024.pdf"),
        ("attachment; filename=plain.txt", "http://h/x/y.bin", "plain.txt"),
        ("inline; FILENAME=upper.txt", "http://h/x/y.bin", "upper.txt"),
        // No usable disposition: the URL's last path component, without the query.
        (nil, "http://h/files/archive.zip?token=1#frag", "archive.zip"),
        ("attachment", "http://h/files/data.csv", "data.csv"),
        ("attachment; filename=\"\"", "http://h/files/data.csv", "data.csv"),
        // Nothing at all: Apple's "Unknown".
        (nil, "http://h/", "Unknown"),
        (nil, "http://h", "Unknown"),
        ("attachment; filename=\"..\"", "http://h/", "Unknown"),
    ] as [(String?, String, String)])
    func suggestedFilename(disposition: String?, url: String, expected: String) {
        var headers: [String: String] = [:]
        if let disposition { headers["Content-Disposition"] = disposition }
        #expect(info(headers, url: url).suggestedFilename == expected)
    }

    /// The byte-level reading of a plain URL gives Foundation's answer; any other URL is left
    /// to Foundation (nil).
    @Test(arguments: [
        ("http://h/files/f00001", true), ("https://h:8080/a/b/c.tar.gz?x=1#y", true), ("http://u@h/x~y_z-1.bin", true),
        ("http://h/a/.hidden", false), ("http://h/a/name.", false), ("http://h/a/b/", false), ("http://h/%41", false),
        ("http://h/a;p", false), ("http://h", false), ("http://h/..", false), ("http://h/a/b c", false),
    ] as [(String, Bool)])
    func plainURLsAreReadAsFoundationReadsThem(url: String, plain: Bool) throws {
        let fast = ResponseInfo.plainLastComponent(of: url)
        #expect((fast != nil) == plain)
        if let fast {
            #expect(String(fast) == URL(string: url)?.lastPathComponent)
            #expect(info([:], url: url).suggestedFilename == String(fast))
        }
    }

    @Test(arguments: [
        "attachment; filename=\"../../etc/passwd\"",
        "attachment; filename=\"/etc/passwd\"",
        "attachment; filename=\"..\\\\..\\\\windows\\\\passwd\"",
        "attachment; filename=\"a/../../passwd\"",
        "attachment; filename=\"..\"",
        "attachment; filename=\".\"",
        "attachment; filename=\"dir/\"",
    ])
    func suggestedFilenameNeverTraverses(disposition: String) throws {
        let name = try #require(info(["Content-Disposition": disposition], url: "http://h/a/..%2F..%2Fetc%2Fpasswd").suggestedFilename)
        #expect(!name.contains("/"))
        #expect(!name.contains("\\"))
        #expect(name != "." && name != ".." && !name.isEmpty)
    }

    @Test func traversalInTheDispositionKeepsOnlyTheLastComponent() {
        #expect(info(["Content-Disposition": "attachment; filename=\"../../etc/passwd\""]).suggestedFilename == "passwd")
    }

    @Test func encodesEveryKeyWithExplicitNulls() throws {
        let data = try JSONCoding.encoder.encode(info([:], url: "http://h/"))
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(Set(object.keys) == ["statusCode", "headers", "mimeType", "textEncodingName", "expectedContentLength", "suggestedFilename", "url"])
        #expect(object["mimeType"] is NSNull)
        #expect(object["suggestedFilename"] as? String == "Unknown")
        let decoded = try JSONCoding.decoder.decode(ResponseInfo.self, from: data)
        #expect(decoded == info([:], url: "http://h/"))
    }
}
