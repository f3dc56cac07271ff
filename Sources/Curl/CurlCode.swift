internal import CCurl

/// A libcurl easy-interface result code (`CURLcode`) with curl's own description. The domain
/// maps these to URLError codes; this layer only names them.
public struct CurlCode: Error, Sendable, Hashable, CustomStringConvertible {
    public let rawValue: Int

    public init(rawValue: Int) { self.rawValue = rawValue }
    init(_ code: CURLcode) { self.rawValue = Int(code.rawValue) }

    public var isOK: Bool { rawValue == 0 }
    public var description: String { String(cString: curl_easy_strerror(CURLcode(UInt32(rawValue)))) }

    public static let ok = CurlCode(CURLE_OK)
    public static let unsupportedProtocol = CurlCode(CURLE_UNSUPPORTED_PROTOCOL)
    public static let urlMalformat = CurlCode(CURLE_URL_MALFORMAT)
    public static let couldntResolveProxy = CurlCode(CURLE_COULDNT_RESOLVE_PROXY)
    public static let couldntResolveHost = CurlCode(CURLE_COULDNT_RESOLVE_HOST)
    public static let couldntConnect = CurlCode(CURLE_COULDNT_CONNECT)
    public static let weirdServerReply = CurlCode(CURLE_WEIRD_SERVER_REPLY)
    public static let remoteAccessDenied = CurlCode(CURLE_REMOTE_ACCESS_DENIED)
    public static let http2 = CurlCode(CURLE_HTTP2)
    public static let partialFile = CurlCode(CURLE_PARTIAL_FILE)
    public static let httpReturnedError = CurlCode(CURLE_HTTP_RETURNED_ERROR)
    public static let writeError = CurlCode(CURLE_WRITE_ERROR)
    public static let uploadFailed = CurlCode(CURLE_UPLOAD_FAILED)
    public static let readError = CurlCode(CURLE_READ_ERROR)
    public static let outOfMemory = CurlCode(CURLE_OUT_OF_MEMORY)
    public static let operationTimedOut = CurlCode(CURLE_OPERATION_TIMEDOUT)
    public static let rangeError = CurlCode(CURLE_RANGE_ERROR)
    public static let sslConnectError = CurlCode(CURLE_SSL_CONNECT_ERROR)
    public static let abortedByCallback = CurlCode(CURLE_ABORTED_BY_CALLBACK)
    public static let tooManyRedirects = CurlCode(CURLE_TOO_MANY_REDIRECTS)
    public static let gotNothing = CurlCode(CURLE_GOT_NOTHING)
    public static let sendError = CurlCode(CURLE_SEND_ERROR)
    public static let recvError = CurlCode(CURLE_RECV_ERROR)
    /// A reused connection died while a body was being sent, and curl, which would retry on a
    /// fresh one, cannot rewind a body read through the read callback.
    public static let sendFailRewind = CurlCode(CURLE_SEND_FAIL_REWIND)
    public static let peerFailedVerification = CurlCode(CURLE_PEER_FAILED_VERIFICATION)
    public static let sslCertProblem = CurlCode(CURLE_SSL_CERTPROBLEM)
    public static let sslCipher = CurlCode(CURLE_SSL_CIPHER)
    public static let sslCACert = CurlCode(CURLE_SSL_CACERT_BADFILE)
    /// The server's certificate was not issued by the required issuer (CURLOPT_ISSUERCERT).
    public static let sslIssuerError = CurlCode(CURLE_SSL_ISSUER_ERROR)
    public static let badContentEncoding = CurlCode(CURLE_BAD_CONTENT_ENCODING)
    public static let filesizeExceeded = CurlCode(CURLE_FILESIZE_EXCEEDED)
    public static let loginDenied = CurlCode(CURLE_LOGIN_DENIED)
    public static let remoteFileNotFound = CurlCode(CURLE_REMOTE_FILE_NOT_FOUND)
    public static let http2Stream = CurlCode(CURLE_HTTP2_STREAM)
    public static let http3 = CurlCode(CURLE_HTTP3)
    public static let sslPinnedPubKeyNotMatch = CurlCode(CURLE_SSL_PINNEDPUBKEYNOTMATCH)
    public static let sslInvalidCertStatus = CurlCode(CURLE_SSL_INVALIDCERTSTATUS)
    public static let sslShutdownFailed = CurlCode(CURLE_SSL_SHUTDOWN_FAILED)
    public static let sslEngineNotFound = CurlCode(CURLE_SSL_ENGINE_NOTFOUND)
    public static let proxy = CurlCode(CURLE_PROXY)
    // FTP and SSH
    /// The remote file is shorter than the offset a resumed download asked for.
    public static let badDownloadResume = CurlCode(CURLE_BAD_DOWNLOAD_RESUME)
    /// ftp:// with `EasyOption.requireTLS`: the server refused AUTH TLS.
    public static let useSSLFailed = CurlCode(CURLE_USE_SSL_FAILED)
    public static let ftpWeirdPassReply = CurlCode(CURLE_FTP_WEIRD_PASS_REPLY)
    public static let ftpWeirdPasvReply = CurlCode(CURLE_FTP_WEIRD_PASV_REPLY)
    public static let ftpWeird227Format = CurlCode(CURLE_FTP_WEIRD_227_FORMAT)
    public static let ftpCantGetHost = CurlCode(CURLE_FTP_CANT_GET_HOST)
    public static let ftpAcceptFailed = CurlCode(CURLE_FTP_ACCEPT_FAILED)
    public static let ftpPortFailed = CurlCode(CURLE_FTP_PORT_FAILED)
    public static let ftpCouldntSetType = CurlCode(CURLE_FTP_COULDNT_SET_TYPE)
    public static let ftpCouldntRetrFile = CurlCode(CURLE_FTP_COULDNT_RETR_FILE)
    public static let ftpCouldntUseRest = CurlCode(CURLE_FTP_COULDNT_USE_REST)
    public static let quoteError = CurlCode(CURLE_QUOTE_ERROR)
    public static let remoteDiskFull = CurlCode(CURLE_REMOTE_DISK_FULL)
    public static let remoteFileExists = CurlCode(CURLE_REMOTE_FILE_EXISTS)
    /// An error of the SSH layer (libssh2) that curl has no closer code for.
    public static let ssh = CurlCode(CURLE_SSH)
}

/// A libcurl multi-interface failure (`CURLMcode`).
public struct CurlMultiError: Error, Sendable, CustomStringConvertible {
    public let rawValue: Int
    public var description: String { String(cString: curl_multi_strerror(CURLMcode(Int32(rawValue)))) }

    static func check(_ code: CURLMcode) throws(CurlMultiError) {
        if code != CURLM_OK { throw CurlMultiError(rawValue: Int(code.rawValue)) }
    }
}

extension CurlCode {
    /// The one funnel from a C result code to a thrown Swift error.
    static func check(_ code: CURLcode) throws(CurlCode) {
        if code != CURLE_OK { throw CurlCode(code) }
    }
}
