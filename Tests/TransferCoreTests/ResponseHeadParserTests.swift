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

    /// The parser reads bytes; `StringParser` below is how it read the same lines as Strings
    /// before. Both are fed the same generated lines (status lines, fields, folds, lines without
    /// a colon, blank lines, tabs and spaces at either end, multi-byte characters, colons in
    /// names and values) and must give the same heads.
    @Test func readingTheBytesGivesWhatReadingTheStringGave() {
        let pieces = ["", " ", "\t", "  \t", "HTTP/1.1 200 OK", "HTTP/2 204", "HTTP/1.1  301  Moved", "HTTP/1.1 abc", "HTTP/1.1",
                      "HTTP/", "Content-Type", "X-É", "a", ":", "::", ": ", " :", "text/plain", "é", "\u{1F600}", "v\tw", "=", "http://h:1/a"]
        var generator = SystemRandomNumberGenerator()
        var old = StringParser(), new = ResponseHeadParser()
        var lines = 0, heads = 0
        for _ in 0..<20_000 {
            // A line of one to four pieces; every tenth a blank line, every twentieth a status line.
            let line: String
            switch Int.random(in: 0..<20, using: &generator) {
            case 0, 1: line = ""
            case 2: line = "HTTP/1.1 \(Int.random(in: 100...599, using: &generator)) X"
            default: line = (0..<Int.random(in: 1...4, using: &generator)).map { _ in pieces.randomElement(using: &generator)! }.joined()
            }
            let expected = old.consume(line), got = new.consume(line)
            lines += 1
            if expected != nil { heads += 1 }
            guard expected == got else {
                Issue.record("line \(lines) \(line.debugDescription): expected \(String(describing: expected)), got \(String(describing: got))")
                return
            }
        }
        #expect(heads > 500, "the corpus ends heads")
    }
}

/// `ResponseHeadParser.consume` as it was before it read bytes (Substrings of the String).
private struct StringParser {
    private var statusCode: Int?
    private var fields: [(name: String, value: String)] = []

    mutating func consume(_ line: String) -> ResponseHead? {
        let bytes = line.utf8
        if bytes.starts(with: "HTTP/".utf8) {
            statusCode = Self.statusCode(of: line)
            fields = []
            return nil
        }
        if bytes.isEmpty {
            guard let statusCode else { return nil }
            defer { self.statusCode = nil; fields = [] }
            return ResponseHead(statusCode: statusCode, fields: fields)
        }
        if let first = bytes.first, first == 0x20 || first == 0x09, !fields.isEmpty {
            fields[fields.count - 1].value += " " + line.trimmed()
            return nil
        }
        guard let colon = bytes.firstIndex(of: 0x3A) else { return nil }
        fields.append((String(line[..<colon]), line[bytes.index(after: colon)...].trimmed()))
        return nil
    }

    private static func statusCode(of line: String) -> Int? {
        let bytes = line.utf8
        guard var start = bytes.firstIndex(of: 0x20) else { return nil }
        while start < bytes.endIndex, bytes[start] == 0x20 { start = bytes.index(after: start) }
        let end = bytes[start...].firstIndex(of: 0x20) ?? bytes.endIndex
        guard start < end else { return nil }
        return Int(Substring(bytes[start..<end]))
    }
}
