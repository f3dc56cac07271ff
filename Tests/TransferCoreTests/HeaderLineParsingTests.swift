import Testing
@testable import TransferCore

/// ResponseHeadParser, fed the lines libcurl's header callback gives (CRLF already trimmed).
@Suite struct HeaderLineParsingTests {
    private func parse(_ lines: [String]) -> [ResponseHead] {
        var parser = ResponseHeadParser()
        return lines.compactMap { parser.consume($0) }
    }

    @Test func oneResponseHead() throws {
        let heads = parse(["HTTP/1.1 200 OK", "Content-Type: text/plain", "Content-Length: 5", ""])
        let head = try #require(heads.first)
        #expect(heads.count == 1)
        #expect(head.statusCode == 200)
        #expect(head.value("content-type") == "text/plain")
        #expect(head.joined["Content-Length"] == "5")
    }

    @Test func interimAndRedirectHeadsAreSeparate() {
        let heads = parse([
            "HTTP/1.1 100 Continue", "",
            "HTTP/1.1 302 Found", "Location: /next", "",
            "HTTP/2 204", "",
        ])
        #expect(heads.map(\.statusCode) == [100, 302, 204])
        #expect(heads[1].value("Location") == "/next")
    }

    @Test func repeatedFieldsJoinUnderTheFirstSpelling() {
        let head = parse(["HTTP/1.1 200 OK", "Vary: Accept", "vary: Origin", ""]).first
        #expect(head?.joined == ["Vary": "Accept, Origin"])
    }
}
