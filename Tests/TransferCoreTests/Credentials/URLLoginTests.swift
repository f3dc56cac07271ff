import Testing
@testable import TransferModel
@testable import TransferStore
@testable import TransferEngine
@testable import TransferService

/// Taking the user and password out of a request URL (issue 16, item 8): only the authority's
/// userinfo, percent-decoded, and the URL left otherwise as it was.
@Suite struct URLLoginTests {
    @Test(arguments: [
        ("http://h.example/a@b?c=d@e#f@g", "http://h.example/a@b?c=d@e#f@g", nil, nil),
        ("http://u:p@h.example:8080/x", "http://h.example:8080/x", "u", "p"),
        ("https://only-user@h.example/", "https://h.example/", "only-user", ""),
        ("http://a%40b:c%3Ad%25e:f@h.example", "http://h.example", "a@b", "c:d%e:f"),
        ("http://u:p@[::1]:8080/x", "http://[::1]:8080/x", "u", "p"),
        ("http://u:p@@h.example/", "http://h.example/", "u", "p@"),
        ("ftp://ftpuser:secret@files.example/pub/f.bin", "ftp://files.example/pub/f.bin", "ftpuser", "secret"),
        ("data:text/plain,user:pass@host", "data:text/plain,user:pass@host", nil, nil),
    ] as [(String, String, String?, String?)])
    func splits(url: String, clean: String, user: String?, password: String?) {
        let (stripped, login) = URLLogin.split(url)
        #expect(stripped == clean)
        #expect(login?.user == user)
        #expect(login?.password == password)
    }

    @Test func theLoginGoesOnlyToItsOwnOrigin() {
        let login = URLLogin.split("http://u:p@H.example/x").login
        #expect(login?.origin == ChallengeOrigin(url: "http://h.example:80/other"))
        #expect(login?.origin != ChallengeOrigin(url: "http://h.example:8080/"))
        #expect(login?.origin != ChallengeOrigin(url: "https://h.example/"))
        #expect(URLLogin.split("sftp://u:p@h.example/f").login?.origin == nil, "not HTTP: the whole transfer's login")
    }
}
