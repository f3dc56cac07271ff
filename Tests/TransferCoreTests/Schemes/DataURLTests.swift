import Foundation
import Testing
@testable import TransferModel
@testable import TransferStore
@testable import TransferEngine
@testable import TransferService

/// `DataURL`: RFC 2397 parsing as URLSession answers it (media type and charset defaults,
/// percent-encoded and base64 data, malformed URLs).
@Suite struct DataURLTests {
    @Test func noMediaTypeIsPlainTextInUSASCII() throws {
        let url = try DataURL(parsing: "data:,Hello%2C%20World%21")
        #expect(url.mimeType == "text/plain")
        #expect(url.textEncodingName == "US-ASCII")
        #expect(url.data == Data("Hello, World!".utf8))
    }

    @Test func base64WithMediaTypeAndCharset() throws {
        let url = try DataURL(parsing: "data:Text/HTML;charset=utf-8;base64,PGI+aMOpPC9iPg==")
        #expect(url.mimeType == "text/html")
        #expect(url.textEncodingName == "utf-8")
        #expect(url.data == Data("<b>hé</b>".utf8))
    }

    @Test func mediaTypeWithoutCharsetHasNoEncodingAndBinaryBytesSurvive() throws {
        let bytes = Data((0...255).map { UInt8($0) })
        let url = try DataURL(parsing: "data:application/octet-stream;base64," + bytes.base64EncodedString())
        #expect(url.mimeType == "application/octet-stream")
        #expect(url.textEncodingName == nil)
        #expect(url.data == bytes)
        let percent = try DataURL(parsing: "data:application/octet-stream," + bytes.map { String(format: "%%%02X", $0) }.joined())
        #expect(percent.data == bytes)
    }

    @Test func charsetAloneKeepsPlainText() throws {
        let url = try DataURL(parsing: "data:;charset=ISO-8859-1,caf%E9")
        #expect(url.mimeType == "text/plain")
        #expect(url.textEncodingName == "ISO-8859-1")
        #expect(url.data == Data([0x63, 0x61, 0x66, 0xE9]))
    }

    @Test func emptyDataFragmentsAndForgivingBase64() throws {
        #expect(try DataURL(parsing: "data:,").data.isEmpty)
        #expect(try DataURL(parsing: "data:;base64,").data.isEmpty)
        #expect(try DataURL(parsing: "DATA:,abc#fragment").data == Data("abc".utf8))
        #expect(try DataURL(parsing: "data:;base64,aGk").data == Data("hi".utf8))  // no padding
        #expect(try DataURL(parsing: "data:;base64,aG%20k=").data == Data("hi".utf8))  // whitespace skipped
        #expect(try DataURL(parsing: "data:,50%zz").data == Data("50%zz".utf8))  // a stray % stays
    }

    @Test func malformedURLsAreRefused() {
        #expect(throws: DataURL.Failure.missingComma) { try DataURL(parsing: "data:text/plain;base64") }
        #expect(throws: DataURL.Failure.invalidBase64) { try DataURL(parsing: "data:;base64,a") }
        #expect(throws: DataURL.Failure.invalidBase64) { try DataURL(parsing: "data:;base64,ab=c") }
        #expect(throws: DataURL.Failure.invalidBase64) { try DataURL(parsing: "data:;base64,a*bc") }
        #expect(throws: DataURL.Failure.notDataURL) { try DataURL(parsing: "http://x/") }
    }
}
