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
}
