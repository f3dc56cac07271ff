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
    /// Whether libcurl decodes the body's Content-Encoding (CURLOPT_HTTP_CONTENT_DECODING; on by
    /// default once `acceptEncoding` is set). Off, the write callback gets the bytes as sent.
    case contentDecoding(Bool)
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
    /// The HTTP versions the transfer may speak (CURLOPT_HTTP_VERSION).
    case httpVersion(HTTPVersion)
    /// Wait for a connection still being set up to the same host to say whether it multiplexes,
    /// rather than open another at once (CURLOPT_PIPEWAIT): transfers started together to an h2
    /// origin then share its first connection. A connection that turns out not to multiplex
    /// releases the waiters, which then open their own.
    /// - SeeAlso: https://curl.se/libcurl/c/CURLOPT_PIPEWAIT.html
    case pipeWait(Bool)
    /// Open a new connection rather than take one from the cache (CURLOPT_FRESH_CONNECT)...
    case freshConnect(Bool)
    /// ...and close it when the transfer ends, so no other transfer takes it (CURLOPT_FORBID_REUSE).
    case forbidReuse(Bool)
    /// Marks every socket curl opens for the transfer with this DSCP code point (0-63), through
    /// CURLOPT_SOCKOPTFUNCTION. Added to a `MultiHandle`, a connection reused from its cache is
    /// marked again before the request goes when it carries another code point (`SocketMarks`).
    case dscp(Int?)
    /// Every connection the handle makes is first put to this gate, on its resolved address
    /// (CURLOPT_OPENSOCKETFUNCTION); a refused one is not made and recorded in
    /// `EasyHandle.connectionRefusal`. Connections to a proxy are not put to it. nil: none.
    /// A `MultiHandle` made with a gate sets it on every handle it is given.
    case connectionGate(ConnectionGate?)
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
    /// Whether the server's certificate is verified: its chain against the trusted CAs
    /// (CURLOPT_SSL_VERIFYPEER) and its name against the URL's host (CURLOPT_SSL_VERIFYHOST 2).
    /// false sets both to 0, curl's `-k`: any certificate is accepted, though a pin
    /// (`pinnedPublicKeys`) is still checked. The proxy's TLS (CURLOPT_PROXY_SSL_VERIFYPEER) is
    /// not touched. - SeeAlso: https://curl.se/libcurl/c/CURLOPT_SSL_VERIFYPEER.html
    case verifyServerCertificate(Bool)

    // FTP, FTPS and SFTP (`Sources/TransferEngine/Schemes/RemoteFileScheme.swift` says how they are used).

    /// Start the download at this byte of the remote file (CURLOPT_RESUME_FROM_LARGE: FTP sends
    /// REST, SFTP seeks). curl fails with CURLE_BAD_DOWNLOAD_RESUME when the file is now shorter.
    /// - SeeAlso: https://curl.se/libcurl/c/CURLOPT_RESUME_FROM_LARGE.html
    case resumeFrom(Int)
    /// Ask the server for the file's modification time (FTP MDTM, SFTP stat), read back with
    /// `EasyHandle.fileTime` (CURLOPT_FILETIME). - SeeAlso: https://curl.se/libcurl/c/CURLOPT_FILETIME.html
    case fileTime(Bool)
    /// ftp:// must upgrade to TLS with AUTH TLS on the control connection and PROT P on the data
    /// connections, or fail with CURLE_USE_SSL_FAILED (CURLOPT_USE_SSL, CURLUSESSL_ALL); false:
    /// CURLUSESSL_NONE. ftps:// is TLS from the first byte whatever this says.
    /// - SeeAlso: https://curl.se/libcurl/c/CURLOPT_USE_SSL.html
    case requireTLS(Bool)
    /// FTP commands sent on the control connection after a successful transfer, in the folder
    /// of the URL's file (CURLOPT_POSTQUOTE); a command starting with "*" may fail without
    /// failing the transfer. Their replies reach the header callback.
    /// - SeeAlso: https://curl.se/libcurl/c/CURLOPT_POSTQUOTE.html
    case commandsAfterTransfer([String])
    /// The OpenSSH known_hosts file the SFTP server's host key must be found in
    /// (CURLOPT_SSH_KNOWNHOSTS). With no CURLOPT_SSH_KEYFUNCTION set, libcurl accepts only a key
    /// that matches the file (CURLKHMATCH_OK): a missing host or another key fails the
    /// connection with CURLE_PEER_FAILED_VERIFICATION. - SeeAlso: https://curl.se/libcurl/c/CURLOPT_SSH_KNOWNHOSTS.html
    case sshKnownHosts(String)
    /// The SSH user authentication methods curl may try (CURLOPT_SSH_AUTH_TYPES).
    case sshAuthentication(password: Bool, keyboardInteractive: Bool, publicKey: Bool)

    // Stream tasks (connect-only connections).

    /// Connect (and do TLS for https) only, then stop: the application moves bytes itself with
    /// `send`/`receive` (CURLOPT_CONNECT_ONLY). Such a connection is never reused by curl.
    /// - SeeAlso: https://curl.se/libcurl/c/CURLOPT_CONNECT_ONLY.html
    case connectOnly(Bool)
    /// Collects the server's certificate chain during the TLS handshake (CURLOPT_CERTINFO), read
    /// with `EasyHandle.certificateChain`.
    /// - SeeAlso: https://curl.se/libcurl/c/CURLOPT_CERTINFO.html
    case certificateInfo(Bool)
    /// Whether the TLS handshake offers ALPN (CURLOPT_SSL_ENABLE_ALPN); off for raw streams,
    /// which speak no HTTP.
    case alpn(Bool)
}
