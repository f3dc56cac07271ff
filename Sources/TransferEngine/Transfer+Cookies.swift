internal import Curl

/// Cookies along a redirect chain: libcurl follows redirects (and authentication rounds) itself,
/// so every response head stores its Set-Cookie fields here and re-sets CURLOPT_COOKIE for the
/// request that comes next, which curl builds after this head is read.
extension Transfer {
    /// Sets the Cookie header of the next request, which goes to `url`.
    func sendCookies(to url: String) {
        guard let cookies = job.cookies, cookies.sends else { return }
        try? handle.set(.cookie(cookies.header(for: url)))
    }

    /// `head` answered the request to `answered`; the next request (if any) goes to `next`.
    func exchangeCookies(_ head: ResponseHead, answered: String, next: String) {
        guard let cookies = job.cookies else { return }
        cookies.receive(head, from: answered)
        sendCookies(to: next)
    }
}
