internal import CCurl

/// What curl knows about a transfer, read with curl_easy_getinfo.
/// - SeeAlso: https://curl.se/libcurl/c/curl_easy_getinfo.html
extension EasyHandle {
    public var responseCode: Int { long(CURLINFO_RESPONSE_CODE) ?? 0 }
    public var effectiveURL: String? { string(CURLINFO_EFFECTIVE_URL) }
    public var redirectCount: Int { long(CURLINFO_REDIRECT_COUNT) ?? 0 }
    /// The Content-Length of the current response, nil when unknown.
    public var contentLength: Int? { offset(CURLINFO_CONTENT_LENGTH_DOWNLOAD_T).flatMap { $0 >= 0 ? $0 : nil } }
    /// The remote file's modification time in seconds since 1970, when `EasyOption.fileTime` asked
    /// for it and the server told (CURLINFO_FILETIME_T; -1 when unknown).
    public var fileTime: Int? { offset(CURLINFO_FILETIME_T).flatMap { $0 >= 0 ? $0 : nil } }
    /// Response body bytes received so far as they came off the wire, before any Content-Encoding
    /// is decoded (CURLINFO_SIZE_DOWNLOAD_T; measured with libcurl 7.88: a 50 KiB gzip body of
    /// 50 MiB reports 50,988).
    public var bytesDownloaded: Int { offset(CURLINFO_SIZE_DOWNLOAD_T) ?? 0 }
    /// Request body bytes sent so far (CURLINFO_SIZE_UPLOAD_T).
    public var bytesUploaded: Int { offset(CURLINFO_SIZE_UPLOAD_T) ?? 0 }
    public var primaryIP: String? { string(CURLINFO_PRIMARY_IP) }
    public var primaryPort: Int? { long(CURLINFO_PRIMARY_PORT) }
    public var localIP: String? { string(CURLINFO_LOCAL_IP) }
    public var localPort: Int? { long(CURLINFO_LOCAL_PORT) }
    public var connectionsMade: Int { long(CURLINFO_NUM_CONNECTS) ?? 0 }
    /// Bytes of every response head received so far, redirects' and 1xx's included (CURLINFO_HEADER_SIZE).
    public var headerBytesReceived: Int { long(CURLINFO_HEADER_SIZE) ?? 0 }
    /// Bytes of every request head sent so far, redirects' included (CURLINFO_REQUEST_SIZE).
    public var requestBytesSent: Int { long(CURLINFO_REQUEST_SIZE) ?? 0 }
    /// The phase times so far (see `TransferTimes`).
    public var times: TransferTimes {
        var times = TransferTimes()
        times.nameLookup = seconds(CURLINFO_NAMELOOKUP_TIME_T)
        times.connect = seconds(CURLINFO_CONNECT_TIME_T)
        times.appConnect = seconds(CURLINFO_APPCONNECT_TIME_T)
        times.preTransfer = seconds(CURLINFO_PRETRANSFER_TIME_T)
        times.startTransfer = seconds(CURLINFO_STARTTRANSFER_TIME_T)
        times.total = seconds(CURLINFO_TOTAL_TIME_T)
        times.redirect = seconds(CURLINFO_REDIRECT_TIME_T)
        return times
    }
    /// The status a proxy answered the last CONNECT with (0: no CONNECT was answered).
    public var proxyConnectResponseCode: Int { long(CURLINFO_HTTP_CONNECTCODE) ?? 0 }
    /// Why the last transfer could not use its proxy, nil when it did or had none.
    public var proxyFailure: ProxyFailure? { long(CURLINFO_PROXY_ERROR).flatMap(ProxyFailure.init) }
    /// The HTTP version of the last response in ALPN's names, as URLSessionTaskTransactionMetrics'
    /// networkProtocolName: "http/1.0", "http/1.1", "h2" (over TLS or cleartext alike), "h3";
    /// nil before any response (CURLINFO_HTTP_VERSION).
    public var httpVersion: String? {
        switch long(CURLINFO_HTTP_VERSION) ?? 0 {
        case Int(CURL_HTTP_VERSION_1_0): return "http/1.0"
        case Int(CURL_HTTP_VERSION_1_1): return "http/1.1"
        case Int(CURL_HTTP_VERSION_2_0): return "h2"
        case Int(CURL_HTTP_VERSION_3): return "h3"
        default: return nil
        }
    }

    /// The TLS session of the transfer's connection; nil without TLS, or once the connection is
    /// gone. Read it while the connection is open (a response head is arriving).
    public var tlsSession: TLSSession? {
        var version: Int32 = 0
        var cipherSuite: UInt16 = 0
        transferd_easy_tls_session(raw, &version, &cipherSuite)
        guard version > 0 else { return nil }
        return TLSSession(protocolVersion: Int(version), cipherSuite: cipherSuite == 0 ? nil : Int(cipherSuite))
    }

    /// The server's certificates as PEM, leaf first, when `EasyOption.certificateInfo` was set
    /// and a TLS handshake completed (CURLINFO_CERTINFO: one list of "Name:value" lines per
    /// certificate; its "Cert:" line is the PEM).
    public var certificateChain: [String] {
        var info: UnsafeMutablePointer<curl_certinfo>?
        guard transferd_easy_getinfo_certinfo(raw, &info) == CURLE_OK, let info, let lists = info.pointee.certinfo else { return [] }
        var chain: [String] = []
        for index in 0..<Int(info.pointee.num_of_certs) {
            var line = lists[index]
            while let item = line {
                if let data = item.pointee.data {
                    let text = String(cString: data)
                    if text.hasPrefix("Cert:") { chain.append(String(text.dropFirst("Cert:".count))) }
                }
                line = item.pointee.next
            }
        }
        return chain
    }

    /// The TLS library's verification of the peer's certificate (CURLINFO_SSL_VERIFYRESULT;
    /// OpenSSL's X509_V_* code, 0 when it verified), measured also when verification was off.
    public var tlsVerifyResult: Int? { long(CURLINFO_SSL_VERIFYRESULT) }

    private func long(_ info: CURLINFO) -> Int? {
        var value = 0
        return transferd_easy_getinfo_long(raw, info, &value) == CURLE_OK ? value : nil
    }

    private func offset(_ info: CURLINFO) -> Int? {
        var value: curl_off_t = 0
        return transferd_easy_getinfo_off_t(raw, info, &value) == CURLE_OK ? Int(value) : nil
    }

    /// A *_TIME_T value (microseconds) in seconds; 0 when unknown.
    private func seconds(_ info: CURLINFO) -> Double {
        Double(offset(info) ?? 0) / 1_000_000
    }

    private func string(_ info: CURLINFO) -> String? {
        var value: UnsafeMutablePointer<CChar>?
        guard transferd_easy_getinfo_string(raw, info, &value) == CURLE_OK, let value else { return nil }
        return String(cString: value)
    }
}
