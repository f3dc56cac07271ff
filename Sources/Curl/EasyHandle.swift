internal import CCurl
internal import FoundationEssentials
internal import Glibc

/// One libcurl easy handle and everything it references (header list, error buffer, callbacks).
/// Not Sendable: it is created, configured and driven by the one thread that owns its multi
/// handle. Its delegate is held weakly: the transfer that owns the handle is the delegate.
public final class EasyHandle {
    let raw: UnsafeMutableRawPointer
    public weak var delegate: (any EasyHandleDelegate)?
    /// curl keeps a pointer to each string list (header lines, FTP commands), so they live as
    /// long as the handle.
    private var lists: [CURLoption.RawValue: UnsafeMutablePointer<curl_slist>] = [:]
    /// CURLOPT_ERRORBUFFER: curl writes a detailed message here when a transfer fails.
    private let errorBuffer: UnsafeMutablePointer<CChar>
    /// The DSCP code point the sockopt callback marks new sockets with (`EasyOption.dscp`).
    private(set) var dscp: Int?
    /// Its multi handle's record of socket markings, while it is added to one.
    private(set) var socketMarks: SocketMarks?
    /// The share whose connection cache it uses (`EasyOption.share`): held so it outlives the
    /// handle's use of it.
    private var share: ShareHandle?
    /// A connected socket curl is to take over instead of opening one (`adopt(socket:)`);
    /// -1 once curl took it (it then owns and closes it).
    var adoptedSocket: Int32 = -1
    /// The adopted socket after curl took it: the sockopt callback tells curl it is connected.
    var takenOverSocket: Int32 = -1
    /// Decides every connection this handle makes (`EasyOption.connectionGate`); nil: any.
    private(set) var connectionGate: ConnectionGate?
    /// The last connection the gate refused, if any: a transfer that then failed to connect
    /// failed because of it.
    public internal(set) var connectionRefusal: ConnectionRefusal?

    public init() throws(CurlCode) {
        CurlLibrary.initialise()
        guard let raw = curl_easy_init() else { throw CurlCode.outOfMemory }
        self.raw = raw
        errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE))
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE))
        let me = Unmanaged.passUnretained(self).toOpaque()
        try CurlCode.check(transferd_easy_setopt_ptr(raw, CURLOPT_ERRORBUFFER, errorBuffer))
        try CurlCode.check(transferd_easy_setopt_write_callback(raw, CURLOPT_WRITEFUNCTION, curlWriteCallback))
        try CurlCode.check(transferd_easy_setopt_ptr(raw, CURLOPT_WRITEDATA, me))
        try CurlCode.check(transferd_easy_setopt_write_callback(raw, CURLOPT_HEADERFUNCTION, curlHeaderCallback))
        try CurlCode.check(transferd_easy_setopt_ptr(raw, CURLOPT_HEADERDATA, me))
        try CurlCode.check(transferd_easy_setopt_read_callback(raw, CURLOPT_READFUNCTION, curlReadCallback))
        try CurlCode.check(transferd_easy_setopt_ptr(raw, CURLOPT_READDATA, me))
        try CurlCode.check(transferd_easy_setopt_seek_callback(raw, CURLOPT_SEEKFUNCTION, curlSeekCallback))
        try CurlCode.check(transferd_easy_setopt_ptr(raw, CURLOPT_SEEKDATA, me))
        try CurlCode.check(transferd_easy_setopt_xferinfo_callback(raw, CURLOPT_XFERINFOFUNCTION, curlXferInfoCallback))
        try CurlCode.check(transferd_easy_setopt_ptr(raw, CURLOPT_XFERINFODATA, me))
        try CurlCode.check(transferd_easy_setopt_long(raw, CURLOPT_NOPROGRESS, 0))
        // Signals are unsafe in a threaded process; curl then needs the threaded resolver (it has it).
        try CurlCode.check(transferd_easy_setopt_long(raw, CURLOPT_NOSIGNAL, 1))
    }

    deinit {
        // The owner removed the handle from its multi first (MultiHandle.remove), so curl can no
        // longer call back into this object.
        curl_easy_cleanup(raw)
        if adoptedSocket >= 0 { close(adoptedSocket) }  // curl never took it
        for list in lists.values { curl_slist_free_all(list) }
        errorBuffer.deallocate()
    }

    /// Sets one option. - SeeAlso: https://curl.se/libcurl/c/curl_easy_setopt.html
    public func set(_ option: EasyOption) throws(CurlCode) {
        switch option {
        case .url(let url): try setString(CURLOPT_URL, url)
        case .customRequest(let method): try setString(CURLOPT_CUSTOMREQUEST, method)
        case .noBody(let on): try setLong(CURLOPT_NOBODY, on ? 1 : 0)
        case .body(let data):
            try CurlCode.check(transferd_easy_setopt_off_t(raw, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(data.count)))
            // COPYPOSTFIELDS copies `POSTFIELDSIZE` bytes now: the Data need not outlive this call.
            let code = data.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) in
                let base = bytes.baseAddress ?? UnsafeRawPointer(("" as StaticString).utf8Start)
                return transferd_easy_setopt_ptr(raw, CURLOPT_COPYPOSTFIELDS, base)
            }
            try CurlCode.check(code)
        case .upload(let size):
            try setLong(CURLOPT_UPLOAD, 1)
            try CurlCode.check(transferd_easy_setopt_off_t(raw, CURLOPT_INFILESIZE_LARGE, curl_off_t(size ?? -1)))
        case .headers(let lines): try setList(CURLOPT_HTTPHEADER, lines)
        case .followRedirects(let on): try setLong(CURLOPT_FOLLOWLOCATION, on ? 1 : 0)
        case .keepBodyOnRedirect(let keep301, let keep302, let keep303):
            try setLong(CURLOPT_POSTREDIR, (keep301 ? Int(CURL_REDIR_POST_301) : 0)
                | (keep302 ? Int(CURL_REDIR_POST_302) : 0) | (keep303 ? Int(CURL_REDIR_POST_303) : 0))
        case .maxRedirects(let n): try setLong(CURLOPT_MAXREDIRS, n)
        case .allowedProtocols(let list): try setString(CURLOPT_PROTOCOLS_STR, list)
        case .allowedRedirectProtocols(let list): try setString(CURLOPT_REDIR_PROTOCOLS_STR, list)
        case .connectTimeoutMilliseconds(let ms): try setLong(CURLOPT_CONNECTTIMEOUT_MS, ms)
        case .timeoutMilliseconds(let ms): try setLong(CURLOPT_TIMEOUT_MS, ms)
        case .lowSpeed(let rate, let seconds):
            try setLong(CURLOPT_LOW_SPEED_LIMIT, rate)
            try setLong(CURLOPT_LOW_SPEED_TIME, seconds)
        case .acceptEncoding(let encodings): try setString(CURLOPT_ACCEPT_ENCODING, encodings)
        case .contentDecoding(let on): try setLong(CURLOPT_HTTP_CONTENT_DECODING, on ? 1 : 0)
        case .receiveBufferSize(let bytes): try setLong(CURLOPT_BUFFERSIZE, bytes)
        case .maxReceiveSpeed(let rate):
            try CurlCode.check(transferd_easy_setopt_off_t(raw, CURLOPT_MAX_RECV_SPEED_LARGE, curl_off_t(rate)))
        case .maxSendSpeed(let rate):
            try CurlCode.check(transferd_easy_setopt_off_t(raw, CURLOPT_MAX_SEND_SPEED_LARGE, curl_off_t(rate)))
        case .streamWeight(let weight): try setLong(CURLOPT_STREAM_WEIGHT, weight)
        case .httpVersion(let version): try setLong(CURLOPT_HTTP_VERSION, version.curlValue)
        case .pipeWait(let on): try setLong(CURLOPT_PIPEWAIT, on ? 1 : 0)
        case .freshConnect(let on): try setLong(CURLOPT_FRESH_CONNECT, on ? 1 : 0)
        case .forbidReuse(let on): try setLong(CURLOPT_FORBID_REUSE, on ? 1 : 0)
        case .dscp(let value):
            dscp = value
            try setSocketCallbacks()
        case .share(let handle):
            try CurlCode.check(transferd_easy_setopt_ptr(raw, CURLOPT_SHARE, handle?.raw))
            share = handle
        case .verbose(let on): try setLong(CURLOPT_VERBOSE, on ? 1 : 0)
        case .userAgent(let agent): try setString(CURLOPT_USERAGENT, agent)
        case .cookie(let header): try setString(CURLOPT_COOKIE, header)
        case .credentials(let user, let password):
            try setString(CURLOPT_USERNAME, user)
            try setString(CURLOPT_PASSWORD, password)
        case .httpAuthentication(let scheme): try setLong(CURLOPT_HTTPAUTH, scheme.bitmask)
        case .proxy(let proxy):
            try setString(CURLOPT_PROXY, proxy)
        case .noProxy(let hosts): try setString(CURLOPT_NOPROXY, hosts)
        case .proxyUsername(let name): try setString(CURLOPT_PROXYUSERNAME, name)
        case .proxyPassword(let password): try setString(CURLOPT_PROXYPASSWORD, password)
        case .proxyAuthentication(let basic, let digest):
            // curl.h defines CURLAUTH_BASIC as 1 << 0 and CURLAUTH_DIGEST as 1 << 1, with casts
            // Swift does not import.
            try setLong(CURLOPT_PROXYAUTH, (basic ? 1 << 0 : 0) | (digest ? 1 << 1 : 0))
        case .suppressConnectHeaders(let on): try setLong(CURLOPT_SUPPRESS_CONNECT_HEADERS, on ? 1 : 0)
        case .tlsVersions(let minimum, let maximum): try setLong(CURLOPT_SSLVERSION, minimum.minimumValue | maximum.maximumValue)
        case .caBundle(let pem): try setBlob(CURLOPT_CAINFO_BLOB, pem)
        case .caPath(let path): try setString(CURLOPT_CAPATH, path)
        case .pinnedPublicKeys(let pins): try setString(CURLOPT_PINNEDPUBLICKEY, pins)
        case .verifyServerCertificate(let on):
            try setLong(CURLOPT_SSL_VERIFYPEER, on ? 1 : 0)
            try setLong(CURLOPT_SSL_VERIFYHOST, on ? 2 : 0)
        case .resumeFrom(let offset):
            try CurlCode.check(transferd_easy_setopt_off_t(raw, CURLOPT_RESUME_FROM_LARGE, curl_off_t(offset)))
        case .fileTime(let on): try setLong(CURLOPT_FILETIME, on ? 1 : 0)
        case .commandsAfterTransfer(let commands): try setList(CURLOPT_POSTQUOTE, commands)
        case .requireTLS(let on): try setLong(CURLOPT_USE_SSL, Int(on ? CURLUSESSL_ALL.rawValue : CURLUSESSL_NONE.rawValue))
        case .sshKnownHosts(let path): try setString(CURLOPT_SSH_KNOWNHOSTS, path)
        case .sshAuthentication(let password, let keyboard, let publicKey):
            // curl.h: CURLSSH_AUTH_PUBLICKEY (1<<0), CURLSSH_AUTH_PASSWORD (1<<1), CURLSSH_AUTH_KEYBOARD (1<<3).
            try setLong(CURLOPT_SSH_AUTH_TYPES, (publicKey ? 1 << 0 : 0) | (password ? 1 << 1 : 0) | (keyboard ? 1 << 3 : 0))
        case .connectOnly(let on): try setLong(CURLOPT_CONNECT_ONLY, on ? 1 : 0)
        case .certificateInfo(let on): try setLong(CURLOPT_CERTINFO, on ? 1 : 0)
        case .alpn(let on): try setLong(CURLOPT_SSL_ENABLE_ALPN, on ? 1 : 0)
        case .connectionGate(let gate):
            connectionGate = gate
            try setOpenSocketCallback()
        }
    }

    /// The open-socket callback decides each new connection (`connectionGate`) or hands over an
    /// adopted socket (`adopt(socket:)`); with neither, curl opens sockets itself.
    func setOpenSocketCallback() throws(CurlCode) {
        let needed = connectionGate != nil || adoptedSocket >= 0 || takenOverSocket >= 0
        let me = needed ? Unmanaged.passUnretained(self).toOpaque() : nil
        try CurlCode.check(transferd_easy_setopt_opensocket_callback(raw, CURLOPT_OPENSOCKETFUNCTION, needed ? curlOpenSocketCallback : nil))
        try CurlCode.check(transferd_easy_setopt_ptr(raw, CURLOPT_OPENSOCKETDATA, me))
    }

    /// Added to a multi handle: its sockets are recorded there, so a reused connection can be
    /// re-marked (`SocketMarks`).
    func use(_ marks: SocketMarks) throws(CurlCode) {
        socketMarks = marks
        try setSocketCallbacks()
    }

    /// The sockopt callback marks new sockets (when there is a marking or a record to keep); the
    /// prereq and close callbacks keep the multi handle's record (when there is one).
    func setSocketCallbacks() throws(CurlCode) {
        let me = Unmanaged.passUnretained(self).toOpaque()
        let marks = socketMarks.map { Unmanaged.passUnretained($0).toOpaque() }
        let sockopt = dscp != nil || marks != nil || adoptedSocket >= 0
        try CurlCode.check(transferd_easy_setopt_sockopt_callback(raw, CURLOPT_SOCKOPTFUNCTION, sockopt ? curlSockoptCallback : nil))
        try CurlCode.check(transferd_easy_setopt_ptr(raw, CURLOPT_SOCKOPTDATA, sockopt ? me : nil))
        try CurlCode.check(transferd_easy_setopt_closesocket_callback(raw, CURLOPT_CLOSESOCKETFUNCTION, marks == nil ? nil : curlCloseSocketCallback))
        try CurlCode.check(transferd_easy_setopt_ptr(raw, CURLOPT_CLOSESOCKETDATA, marks))
        try CurlCode.check(transferd_easy_setopt_prereq_callback(raw, CURLOPT_PREREQFUNCTION, marks == nil ? nil : curlPrereqCallback))
        try CurlCode.check(transferd_easy_setopt_ptr(raw, CURLOPT_PREREQDATA, marks == nil ? nil : me))
    }

    /// A string list option; the list it replaces is freed once curl no longer points at it.
    private func setList(_ option: CURLoption, _ lines: [String]) throws(CurlCode) {
        var list: UnsafeMutablePointer<curl_slist>?
        for line in lines { list = curl_slist_append(list, line) }
        do {
            try CurlCode.check(transferd_easy_setopt_ptr(raw, option, list))
        } catch {
            if let list { curl_slist_free_all(list) }
            throw error
        }
        if let old = lists[option.rawValue] { curl_slist_free_all(old) }
        lists[option.rawValue] = list
    }

    private func setLong(_ option: CURLoption, _ value: Int) throws(CurlCode) {
        try CurlCode.check(transferd_easy_setopt_long(raw, option, value))
    }

    /// curl copies string options (since 7.17), so the Swift string need not outlive the call.
    private func setString(_ option: CURLoption, _ value: String?) throws(CurlCode) {
        guard let value else {
            try CurlCode.check(transferd_easy_setopt_ptr(raw, option, nil))
            return
        }
        try CurlCode.check(value.withCString { transferd_easy_setopt_ptr(raw, option, $0) })
    }

    /// A blob option with CURL_BLOB_COPY: curl copies the bytes before this returns, so they
    /// need not outlive the call. nil clears it. - SeeAlso: https://curl.se/libcurl/c/CURLOPT_CAINFO_BLOB.html
    private func setBlob(_ option: CURLoption, _ bytes: [UInt8]?) throws(CurlCode) {
        guard let bytes else {
            try CurlCode.check(transferd_easy_setopt_ptr(raw, option, nil))
            return
        }
        let code = bytes.withUnsafeBytes { buffer in
            var blob = curl_blob(data: UnsafeMutableRawPointer(mutating: buffer.baseAddress), len: buffer.count, flags: UInt32(CURL_BLOB_COPY))
            return transferd_easy_setopt_ptr(raw, option, &blob)
        }
        try CurlCode.check(code)
    }

    /// Pauses or resumes both directions. - SeeAlso: https://curl.se/libcurl/c/curl_easy_pause.html
    public func pause(_ paused: Bool) throws(CurlCode) {
        try CurlCode.check(curl_easy_pause(raw, paused ? CURLPAUSE_ALL : CURLPAUSE_CONT))
    }

    /// Pauses sending only (CURLPAUSE_SEND sets the whole pause state: receiving is unpaused,
    /// which redelivers a chunk a write callback refused; that callback may pause it again).
    /// Allowed from inside this handle's callbacks; `pause(false)` resumes.
    public func pauseSending() throws(CurlCode) {
        try CurlCode.check(curl_easy_pause(raw, CURLPAUSE_SEND))
    }

    /// The detailed message curl wrote for the last failure, or nil.
    public var errorMessage: String? {
        let message = String(cString: errorBuffer)
        return message.isEmpty ? nil : message
    }

    /// Runs the transfer synchronously on the calling thread (tests and tools only).
    public func perform() -> CurlCode { CurlCode(curl_easy_perform(raw)) }
}
