import Testing
@testable import TransferModel
@testable import TransferStore
@testable import TransferEngine
@testable import TransferService

/// `ResponseHeadParser` fed header lines as libcurl's header callback delivers them (CRLF removed).
@Suite struct ResponseHeadParserTests {
    /// Feeds every line and returns the complete heads in the order they ended.
    private func heads(_ lines: [String]) -> [ResponseHead] {
        var parser = ResponseHeadParser()
        return lines.compactMap { parser.consume($0) }
    }

    @Test(arguments: [
        ("HTTP/1.0 200 OK", 200),
        ("HTTP/1.1 404 Not Found", 404),
        ("HTTP/2 503", 503),
        ("HTTP/2 200 ", 200),
        ("HTTP/1.1 204 ", 204),
        ("HTTP/1.1 204", 204),
        ("HTTP/1.1 418 I'm a teapot (really)", 418),
        ("HTTP/1.1  301  Moved", 301),
    ])
    func statusLine(line: String, status: Int) {
        let result = heads([line, "Content-Length: 0", ""])
        #expect(result.count == 1)
        #expect(result.first?.statusCode == status)
        #expect(result.first?.value("content-length") == "0")
    }

    @Test func fieldsKeepOrderAndTrimWhitespace() throws {
        let head = try #require(heads(["HTTP/1.1 200 OK", "Content-Type:   text/plain \t", "Location: http://h:8080/a:b", "X-Empty:", ""]).first)
        #expect(head.fields.map(\.name) == ["Content-Type", "Location", "X-Empty"])
        #expect(head.fields.map(\.value) == ["text/plain", "http://h:8080/a:b", ""])
        #expect(head.value("LOCATION") == "http://h:8080/a:b")
        #expect(head.value("X-Missing") == nil)
    }

    @Test func statusLinesWithoutACodeGiveNoHead() {
        #expect(heads(["HTTP/1.1", "Content-Length: 0", ""]).isEmpty)
        #expect(heads(["HTTP/1.1 ", "Content-Length: 0", ""]).isEmpty)
        #expect(heads(["HTTP/1.1 abc", "Content-Length: 0", ""]).isEmpty)
    }

    /// `trimmed()` reads a String's or a Substring's bytes from both ends: spaces and tabs only.
    @Test func trimmingTakesSpacesAndTabsFromBothEndsOnly() {
        let cases: [(String, String)] = [
            ("", ""), ("   ", ""), ("\t \t", ""), ("a", "a"), (" a", "a"), ("a\t", "a"), (" \ta b\t ", "a b"),
            ("\u{00A0}x\u{00A0}", "\u{00A0}x\u{00A0}"), (" é ", "é"), ("\r x \n", "\r x \n"),
        ]
        for (text, expected) in cases {
            #expect(text.trimmed() == expected, "\(text.debugDescription)")
            #expect(("<" + text + ">").dropFirst().dropLast().trimmed() == expected, "substring \(text.debugDescription)")
        }
    }

    @Test func aContentTypeIsSplitIntoItsTypeAndCharset() {
        let cases: [(String, String?, String?)] = [
            ("text/html; charset=UTF-8", "text/html", "utf-8"),
            ("Text/HTML ;\tCharset=\"ISO-8859-1\" ", "text/html", "iso-8859-1"),
            (";text/plain", "text/plain", nil),
            ("  ; charset=utf-8", nil, "utf-8"),
            ("application/json", "application/json", nil),
            ("", nil, nil),
        ]
        for (contentType, mimeType, charset) in cases {
            let info = ResponseInfo(statusCode: 200, headers: ["Content-Type": contentType], url: "http://h/x")
            #expect(info.mimeType == mimeType, "\(contentType)")
            #expect(info.textEncodingName == charset, "\(contentType)")
        }
    }

    @Test func repeatedFieldsAreJoinedUnderTheFirstSpelling() throws {
        let head = try #require(heads([
            "HTTP/1.1 200 OK", "Set-Cookie: a=1", "Vary: Accept", "set-cookie: b=2", "SET-COOKIE: c=3", "",
        ]).first)
        let joined = head.joined
        #expect(joined == ["Set-Cookie": "a=1, b=2, c=3", "Vary": "Accept"])
        #expect(joined["set-cookie"] == nil)
        // `value` answers the first occurrence, as HTTPURLResponse's single-value lookups do.
        #expect(head.value("set-cookie") == "a=1")
    }

    @Test func obsoleteLineFoldingContinuesThePreviousValue() throws {
        let head = try #require(heads([
            "HTTP/1.1 200 OK", "X-Long: first", "   second", "\tthird", "X-Next: n", "",
        ]).first)
        #expect(head.joined == ["X-Long": "first second third", "X-Next": "n"])
    }

    @Test func aContinueBlockIsItsOwnHeadBeforeTheRealResponse() {
        let result = heads([
            "HTTP/1.1 100 Continue", "X-Interim: yes", "",
            "HTTP/1.1 201 Created", "Content-Length: 5", "Location: /new", "",
        ])
        #expect(result.map(\.statusCode) == [100, 201])
        #expect(result[0].joined == ["X-Interim": "yes"])
        // Nothing of the interim block leaks into the final response.
        #expect(result[1].joined == ["Content-Length": "5", "Location": "/new"])
    }

    @Test func redirectThenFinalResponseAreSeparateHeads() {
        let result = heads([
            "HTTP/1.1 302 Found", "Location: /b", "Content-Length: 0", "",
            "HTTP/1.1 200 OK", "Content-Length: 2", "",
        ])
        #expect(result.map(\.statusCode) == [302, 200])
        #expect(result[1].value("Location") == nil)
        #expect(result[1].value("Content-Length") == "2")
    }

    @Test func blankLineWithoutStatusLineAndLinesWithoutColonAreIgnored() {
        var parser = ResponseHeadParser()
        #expect(parser.consume("") == nil)
        #expect(parser.consume("HTTP/1.1 200 OK") == nil)
        #expect(parser.consume("garbage without colon") == nil)
        #expect(parser.consume("A: 1") == nil)
        #expect(parser.consume("") == ResponseHead(statusCode: 200, fields: [(name: "A", value: "1")]))
        // The parser starts afresh: a second blank line is no head.
        #expect(parser.consume("") == nil)
    }
}
