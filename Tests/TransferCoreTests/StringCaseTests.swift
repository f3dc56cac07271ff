import Testing
@testable import TransferModel

/// Header names compare equal ignoring ASCII case only: letters fold, nothing else does.
@Suite struct StringCaseTests {
    @Test(arguments: [
        ("Set-Cookie", "set-cookie", true), ("WWW-Authenticate", "www-authenticate", true), ("", "", true),
        ("content-length", "Content-Length", true), ("a", "ab", false), ("ab", "a", false), ("", "a", false),
        ("@", "`", false), ("[", "{", false), ("^", "~", false), ("X-1", "x-1", true), ("x-1", "x-2", false),
        ("É", "é", false), ("é", "é", true),
    ])
    func foldsASCIILettersOnly(a: String, b: String, equal: Bool) {
        #expect(a.equalsIgnoringASCIICase(b) == equal)
        #expect(b.equalsIgnoringASCIICase(a) == equal)
        #expect(a.equalsIgnoringASCIICase(b[...]) == equal)
    }
}
