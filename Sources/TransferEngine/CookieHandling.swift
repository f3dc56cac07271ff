/// What a transfer does with cookies: the Cookie header of each request and the Set-Cookie
/// fields of each response head. The service implements it over its session's jar
/// (`TransferCookies`), so the engine holds no cookie storage of its own.
package protocol CookieHandling: Sendable {
    /// False when the request carries its own Cookie header: it keeps it and gets no jar cookies.
    var sends: Bool { get }
    /// The Cookie header for the request to `url`, or nil.
    func header(for url: String) -> String?
    /// Takes the Set-Cookie fields of a response head received from `url`.
    func receive(_ head: ResponseHead, from url: String)
}
