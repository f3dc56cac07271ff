import Foundation
import Testing
@testable import TransferModel
@testable import TransferStore
@testable import TransferEngine
@testable import TransferService

/// `ContentDisposition`: RFC 6266 filenames, with RFC 8187 `filename*` taking precedence, and
/// the `attachment` value `GET /v1/tasks/{tid}/file` sends.
@Suite struct ContentDispositionTests {
    @Test(arguments: [
        // Tokens and quoted-strings.
        ("attachment; filename=plain.txt", "plain.txt"),
        ("attachment; filename=\"with space.txt\"", "with space.txt"),
        ("inline; FILENAME=upper.txt", "upper.txt"),
        ("attachment;filename=tight.txt", "tight.txt"),
        ("attachment; filename = spaced.txt ; size=3", "spaced.txt"),
        // Semicolons and equals signs inside quotes do not split.
        ("attachment; filename=\"a;b=c.txt\"; size=3", "a;b=c.txt"),
        ("attachment; name=\"x;y\"; filename=\"after.txt\"", "after.txt"),
        // Quoted-pair escapes.
        ("attachment; filename=\"say \\\"hi\\\".txt\"", "say \"hi\".txt"),
        ("attachment; filename=\"back\\\\slash.txt\"", "back\\slash.txt"),
        ("attachment; filename=\"\\a\\b.txt\"", "ab.txt"),
        // The first of repeated parameters.
        ("attachment; filename=first.txt; filename=second.txt", "first.txt"),
    ] as [(String, String)])
    func filenameParameter(header: String, expected: String) {
        #expect(ContentDisposition.filename(in: header) == expected)
    }

    @Test(arguments: [
        // filename* wins, before or after filename.
        ("attachment; filename*=UTF-8''na%C3%AFve%20file.txt", "naïve file.txt"),
        ("attachment; filename=\"EUR rates.txt\"; filename*=UTF-8''%E2%82%AC%20rates.txt", "€ rates.txt"),
        ("attachment; filename*=UTF-8''%E2%82%AC%20rates.txt; filename=\"EUR rates.txt\"", "€ rates.txt"),
        // Charset and parameter name are case-insensitive; the language tag is ignored.
        ("attachment; FILENAME*=utf-8'en-US'caf%C3%A9.pdf", "café.pdf"),
        // ISO-8859-1: each byte is one code point.
        ("attachment; filename*=iso-8859-1'en'%A3%20rates.txt", "£ rates.txt"),
        ("attachment; filename*=ISO-8859-1''na%EFve.txt", "naïve.txt"),
        // Unencoded attr-chars pass through.
        ("attachment; filename*=UTF-8''plain-name_1.tar.gz", "plain-name_1.tar.gz"),
        ("attachment; filename*=UTF-8''%e6%97%a5%e6%9c%ac.txt", "日本.txt"),
    ] as [(String, String)])
    func extendedFilenameTakesPrecedence(header: String, expected: String) {
        #expect(ContentDisposition.filename(in: header) == expected)
    }

    @Test(arguments: [
        // Bad percent-encoding, invalid UTF-8, an unknown charset or a malformed ext-value: the
        // plain filename is used instead.
        "attachment; filename=\"fallback.txt\"; filename*=UTF-8''bad%ZZ.txt",
        "attachment; filename=\"fallback.txt\"; filename*=UTF-8''truncated%C",
        "attachment; filename=\"fallback.txt\"; filename*=UTF-8''truncated%",
        "attachment; filename=\"fallback.txt\"; filename*=UTF-8''%C3%28.txt",
        "attachment; filename=\"fallback.txt\"; filename*=UTF-8''%FF.txt",
        "attachment; filename=\"fallback.txt\"; filename*=UTF-8''sign%+Ad.txt",
        "attachment; filename=\"fallback.txt\"; filename*=UTF-8''sign%-1d.txt",
        "attachment; filename*=KOI8-R''%F0%D2.txt; filename=\"fallback.txt\"",
        "attachment; filename*=na%C3%AFve.txt; filename=\"fallback.txt\"",
        "attachment; filename*=UTF-8'na%C3%AFve.txt; filename=fallback.txt",
    ])
    func badExtendedValueFallsBackToFilename(header: String) {
        #expect(ContentDisposition.filename(in: header) == "fallback.txt")
    }

    @Test(arguments: [
        "attachment", "inline", "", "attachment;", "attachment; size=42", "attachment; filename*=UTF-8''%ZZ",
    ])
    func noFilename(header: String) {
        #expect(ContentDisposition.filename(in: header) == nil)
    }

    @Test func parametersAreLowercasedAndUnquoted() {
        let parameters = ContentDisposition.parameters("form-data; Name=\"field;1\"; FileName=\"a \\\"b\\\"\"; x=y")
        #expect(parameters == ["name": "field;1", "filename": "a \"b\"", "x": "y"])
    }

    @Test func attachmentHasAnASCIIFallbackAndTheExactNameEncoded() {
        #expect(ContentDisposition.attachment(filename: "naïve file.txt")
            == "attachment; filename=\"na_ve file.txt\"; filename*=UTF-8''na%C3%AFve%20file.txt")
        #expect(ContentDisposition.attachment(filename: "16MiB.bin")
            == "attachment; filename=\"16MiB.bin\"; filename*=UTF-8''16MiB.bin")
        #expect(ContentDisposition.attachment(filename: "say \"hi\".txt")
            == "attachment; filename=\"say _hi_.txt\"; filename*=UTF-8''say%20%22hi%22.txt")
    }

    @Test(arguments: [
        "plain.txt", "naïve file.txt", "€ rates 100%.txt", "日本語のファイル.pdf", "say \"hi\".txt",
        "back\\slash.txt", "semi;colon=equals.txt", "quote'apostrophe.txt", "tab\there.txt",
        "emoji 🎉.png", "e\u{301}cole.txt", "a,b(c)[d]{e}<f>@g?h.txt",
    ])
    func attachmentRoundTripsThroughFilename(name: String) {
        let header = ContentDisposition.attachment(filename: name)
        #expect(header.unicodeScalars.allSatisfy { $0.isASCII && $0.value >= 0x20 && $0.value != 0x7f }, "\(header)")
        let decoded = ContentDisposition.filename(in: header)
        #expect(decoded == name)
        // Exactly the same scalars, not merely canonically equivalent ones.
        #expect(decoded.map { Array($0.unicodeScalars) } == Array(name.unicodeScalars))
        // The quoted fallback alone also parses, as a plain-filename client would read it.
        let fallbackOnly = header.components(separatedBy: "; filename*=").first ?? ""
        #expect(ContentDisposition.filename(in: fallbackOnly)?.unicodeScalars.count == name.unicodeScalars.count)
    }

    @Test func suggestedFilenameUsesTheExtendedValueAndSanitises() {
        func suggested(_ disposition: String?, _ url: String = "http://h/path/from-url.bin") -> String? {
            var headers: [String: String] = [:]
            if let disposition { headers["Content-Disposition"] = disposition }
            return ResponseInfo(statusCode: 200, headers: headers, url: url).suggestedFilename
        }
        #expect(suggested("attachment; filename*=UTF-8''na%C3%AFve%20file.txt") == "naïve file.txt")
        #expect(suggested("attachment; filename=\"..\\\\..\\\\evil\"") == "evil")
        #expect(suggested("attachment; filename*=UTF-8''..%2F..%2Fetc%2Fpasswd") == "passwd")
        #expect(suggested("attachment; filename*=UTF-8''%2E%2E") == "from-url.bin")
        #expect(suggested("attachment; filename=\"  .hidden. \"") == "hidden")
        #expect(suggested("attachment; filename=\"ctl\u{7f}\u{1}.txt\"") == "ctl.txt")
        #expect(suggested(nil) == "from-url.bin")
        #expect(suggested(nil, "http://h/") == "Unknown")
        let long = suggested("attachment; filename*=UTF-8''" + String(repeating: "%C3%A9", count: 200))
        #expect((long?.utf8.count ?? 0) <= 255)
        #expect(long == String(repeating: "é", count: 127))
    }
}
