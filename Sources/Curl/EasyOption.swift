public import FoundationEssentials

/// The easy-handle options transferd uses, as one typed catalogue. `EasyHandle.set` maps each to
/// its CURLOPT in one place. - SeeAlso: https://curl.se/libcurl/c/curl_easy_setopt.html
public enum EasyOption {
    case url(String)
    /// Any method other than GET/HEAD/POST is sent with CURLOPT_CUSTOMREQUEST.
    case customRequest(String?)
    /// HEAD: no body is read (CURLOPT_NOBODY).
    case noBody(Bool)
    /// A request body, copied by curl (CURLOPT_POSTFIELDSIZE_LARGE + CURLOPT_COPYPOSTFIELDS).
    case body(Data)
    /// A request body of `size` bytes streamed through the delegate's `fill` (CURLOPT_UPLOAD with
    /// CURLOPT_INFILESIZE_LARGE); the method is then PUT unless `customRequest` names another.
    /// nil: the length is unknown, and HTTP/1.1 sends it chunked.
    case upload(size: Int?)
    /// Header lines "Name: value"; "Name:" removes a header curl would add.
    case headers([String])
    case followRedirects(Bool)
    /// Redirects after which a request with a body keeps its method and body instead of
    /// switching to GET (CURLOPT_POSTREDIR). By default 301, 302 and 303 switch.
    case keepBodyOnRedirect(status301: Bool, status302: Bool, status303: Bool)
    case maxRedirects(Int)
    case allowedProtocols(String)
    case allowedRedirectProtocols(String)
    case connectTimeoutMilliseconds(Int)
    /// Whole-transfer limit (CURLOPT_TIMEOUT_MS); 0 means none.
    case timeoutMilliseconds(Int)
    /// Abort when fewer than `bytesPerSecond` move for `seconds` (an idle timeout).
    case lowSpeed(bytesPerSecond: Int, seconds: Int)
    /// "" asks for every encoding curl can decode; nil disables decoding.
    case acceptEncoding(String?)
    /// The receive buffer, i.e. the most bytes one write callback gets (CURLOPT_BUFFERSIZE;
    /// libcurl's default is 16 KiB, its maximum 512 KiB in 7.88).
    case receiveBufferSize(Int)
    case maxReceiveSpeed(Int)
    case maxSendSpeed(Int)
    /// HTTP/2 stream weight, 1 to 256 (CURLOPT_STREAM_WEIGHT; libcurl ignores values outside).
    /// Changed on a running transfer, libcurl sends a PRIORITY frame the next time it sends or
    /// reads for that stream (7.88 lib/http2.c h2_session_send compares the wanted weight with
    /// the one in effect); over HTTP/1.1 it does nothing.
    case streamWeight(Int)
    /// Marks every socket curl opens for the transfer with this DSCP code point (0-63), through
    /// CURLOPT_SOCKOPTFUNCTION. Added to a `MultiHandle`, a connection reused from its cache is
    /// marked again before the request goes when it carries another code point (`SocketMarks`).
    case dscp(Int?)
    /// Take and return connections in this share's cache rather than the multi handle's
    /// (CURLOPT_SHARE); nil goes back to the multi handle's. The handle keeps the share alive.
    case share(ShareHandle?)
    case verbose(Bool)
    case userAgent(String?)
    /// The Cookie header's value for the requests curl makes from now on, nil for none
    /// (CURLOPT_COOKIE). curl reads it as it builds each request, so one set while a response
    /// head arrives goes with the redirect or authentication round that follows; curl's own
    /// cookie engine stays off. - SeeAlso: https://curl.se/libcurl/c/CURLOPT_COOKIE.html
    case cookie(String?)
    /// CURLOPT_USERNAME and CURLOPT_PASSWORD (curl copies both). CURLOPT_UNRESTRICTED_AUTH stays
    /// 0: curl sends them, and a user-set Authorization header, only while the host, port and
    /// scheme are those of the first request (Curl_auth_allowed_to_host).
    case credentials(user: String, password: String)
    /// CURLOPT_HTTPAUTH: the scheme curl answers a 401 with.
    case httpAuthentication(HTTPAuthScheme)
    /// The proxy for the next connection, as "http://host:port" or "socks5h://host:port"
    /// (socks5h: the proxy resolves the name). "" means none, and also that curl does not read
    /// the http_proxy / https_proxy / all_proxy environment variables (CURLOPT_PROXY).
    case proxy(String)
    /// Hosts that bypass the proxy; "" is none and stops curl reading no_proxy from the
    /// environment (CURLOPT_NOPROXY). transferd decides bypasses itself and always sets "".
    case noProxy(String)
    /// CURLOPT_PROXYUSERNAME / CURLOPT_PROXYPASSWORD: sent to an HTTP proxy (Basic or Digest,
    /// as `proxyAuthentication` allows) or to a SOCKS5 proxy (RFC 1929). Copied by curl.
    case proxyUsername(String?)
    case proxyPassword(String?)
    /// The HTTP proxy authentication schemes curl may pick from the proxy's 407 challenge
    /// (CURLOPT_PROXYAUTH). With more than one, curl first asks without credentials.
    case proxyAuthentication(basic: Bool, digest: Bool)
    /// Keeps a CONNECT response's head away from the header callback, so the only heads it
    /// sees are the origin's (CURLOPT_SUPPRESS_CONNECT_HEADERS).
    case suppressConnectHeaders(Bool)
    /// The lowest and highest TLS version the handshake may agree on (CURLOPT_SSLVERSION).
    case tlsVersions(minimum: TLSProtocolVersion, maximum: TLSProtocolVersion)
    /// PEM certificates that are the only trust anchors for the server's certificate, passed
    /// in memory (CURLOPT_CAINFO_BLOB, copied); nil: the default CA file again.
    case caBundle([UInt8]?)
    /// The folder of hashed CA certificates curl also trusts (CURLOPT_CAPATH); nil: none.
    case caPath(String?)
    /// "sha256//BASE64;sha256//BASE64..." (CURLOPT_PINNEDPUBLICKEY): the handshake fails with
    /// CURLE_SSL_PINNEDPUBKEYNOTMATCH unless the server's public key hashes to one of them.
    case pinnedPublicKeys(String?)
    /// Connect (and do TLS for https) only, then stop: the application moves bytes itself with
    /// `send`/`receive` (CURLOPT_CONNECT_ONLY). Such a connection is never reused by curl.
    /// - SeeAlso: https://curl.se/libcurl/c/CURLOPT_CONNECT_ONLY.html
    case connectOnly(Bool)
    /// Whether the TLS handshake offers ALPN (CURLOPT_SSL_ENABLE_ALPN); off for raw streams,
    /// which speak no HTTP.
    case alpn(Bool)
}
