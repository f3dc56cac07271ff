internal import FoundationEssentials
internal import Curl
internal import TransferModel

/// ftp:, ftps: and sftp: tasks on the easy handle (`RemoteFileScheme`). libcurl does the
/// protocol; this decides what it is asked for and makes the URLResponse, which these schemes do
/// not send: status 0, no header fields, the file's length when the server told it (FTP SIZE,
/// SFTP stat), application/octet-stream (the daemon does not guess types), or text/plain for a
/// folder listing. It is reported when the first byte arrives, or when the transfer ends.
///
/// - Connections: explicit FTPS (ftp: with AUTH TLS) opens one per task (`useOwnConnection`);
///   plain FTP, implicit FTPS and SFTP reuse cached ones as HTTP does.
/// - Passive mode: libcurl's default, EPSV then PASV (CURLOPT_FTP_USE_EPSV), with the data
///   connection opened by the client; active mode (PORT) is not offered.
/// - Listings: a URL ending in "/" gets the server's full LIST output (one `ls -l` style line per
///   entry), not NLST's bare names (CURLOPT_DIRLISTONLY stays off): sizes and dates come along.
/// - Uploads: an ftp: or ftps: upload ends with SIZE of the stored file, which must be the bytes
///   sent (`StoredSizeCheck`).
/// - Resume: by offset (CURLOPT_RESUME_FROM_LARGE: FTP REST, SFTP seek). There is no ETag; the
///   validator is the file's size and modification time (MDTM, SFTP stat) when the download
///   started: a file that changed since makes the download start again from zero, never a
///   splice of two files.
/// - Login: the URL's own user and password if it has them, else the first credential the
///   session's credential store holds for (host, port, scheme, any realm, method "default"),
///   reported with didReceiveChallenge; else FTP's anonymous login. A refused login fails the
///   task with userAuthenticationRequired; no second credential is tried.
/// - Metrics: one transaction, networkProtocolName "ftp", "ftps" or "sftp" (no ALPN name exists).
/// - SFTP: password and keyboard-interactive logins only (the daemon's own ~/.ssh keys are never
///   offered); the server's host key must be in the daemon's known_hosts file (`--ssh-known-hosts`).
extension Transfer {
    func configureRemoteFile(_ scheme: RemoteFileScheme) throws {
        try handle.set(.allowedProtocols(scheme.curlProtocol))
        try handle.set(.followRedirects(false))
        try handle.set(.fileTime(true))
        switch scheme {
        case .ftp:
            try handle.set(.requireTLS(job.network.ftpRequiresTLS))
            if job.network.ftpRequiresTLS { try useOwnConnection() }
        case .ftps: break  // TLS from the first byte; the session's TLS settings were set with the network's
        case .sftp:
            try handle.set(.sshKnownHosts(job.sshKnownHostsFile))
            try handle.set(.sshAuthentication(password: true, keyboardInteractive: true, publicKey: false))
        }
        try configureRemoteBody()
        let isUpload = bodyReader != nil || streamReader != nil
        if isUpload, scheme == .ftps || scheme == .ftp && job.network.ftpRequiresTLS {
            try capTLSForUpload()
        }
        if isUpload, scheme != .sftp, let check = StoredSizeCheck(uploadURL: job.request.url) {
            storedSizeCheck = check
            try handle.set(.commandsAfterTransfer([check.command]))
        }
        if base > 0 { try handle.set(.resumeFrom(base)) }
        try configureRemoteLogin(scheme)
    }

    /// GET without a body downloads (or lists); PUT or POST with a body stores it as the file.
    private func configureRemoteBody() throws {
        let method = job.request.method.uppercased()
        let hasBody = job.body != nil || job.streamedBody != nil || job.bodyStream != nil
        if method == "GET" && !hasBody { return }
        guard method == "PUT" || method == "POST", hasBody else {
            throw TaskError(.unsupportedURL, "ftp:, ftps: and sftp: URLs support GET (a file, or the listing of a URL ending in /) and PUT with a body (an upload)")
        }
        guard !RemoteFileScheme.isListing(job.request.url) else {
            throw TaskError(.badURL, "an upload URL must name a file, not a folder ending in /")
        }
        if let stream = job.bodyStream {
            let reader = StreamBodyReader(stream)
            streamReader = reader
            bodySize = reader.length
        } else {
            let reader = try BodyReader(job.streamedBody ?? [.bytes(job.body ?? Data())], from: job.streamedBody == nil ? 0 : job.streamedBodyOffset)
            bodyReader = reader
            bodySize = reader.size
        }
        try handle.set(.upload(size: bodySize))
    }

    /// An ftp: URL upgraded with AUTH TLS gets a connection of its own, closed when it ends:
    /// libcurl compares TLS settings only for schemes that are TLS from the start, so it would
    /// otherwise take a cached ftp: control connection whose TLS was set up with another task's
    /// settings (measured with 7.88.1: a session without the server's CA downloaded over a
    /// connection another session had verified with it, and an upload capped at TLS 1.2 below
    /// ran over a TLS 1.3 connection and lost its end). The cost is a login per task.
    private func useOwnConnection() throws {
        try handle.set(.freshConnect(true))
        try handle.set(.forbidReuse(true))
    }

    /// libcurl 7.88 closes an FTPS upload's data connection with the server's TLS 1.3 session
    /// tickets unread, so the kernel resets it and the server can lose the file's last bytes
    /// while still answering 226 (curl issue 6149, fixed in later libcurl; measured here: a
    /// 300,001-byte upload stored as 114,688 bytes). TLS 1.2 sends its tickets inside the
    /// handshake, so FTPS uploads are capped at TLS 1.2; a session that requires TLS 1.3 gets
    /// a clear error rather than a silently truncated file.
    private func capTLSForUpload() throws {
        let network = job.network
        let order = TLSVersion.allCases  // oldest first
        func atMostTLS12(_ version: TLSVersion) -> Bool { order.firstIndex(of: version)! <= order.firstIndex(of: .TLSv12)! }
        guard atMostTLS12(network.tlsMinimum) else {
            throw TaskError(.secureConnectionFailed, "FTPS uploads need TLS 1.2 with this libcurl (over TLS 1.3 the server may lose the file's end), and this session's tlsMinimumSupportedProtocolVersion is above it")
        }
        let maximum = atMostTLS12(network.tlsMaximum) ? network.tlsMaximum : .TLSv12
        try handle.set(.tlsVersions(minimum: network.tlsMinimum.curl, maximum: maximum.curl))
    }

    private func configureRemoteLogin(_ scheme: RemoteFileScheme) throws {
        guard let url = URL(string: job.request.url), let host = url.host, !host.isEmpty else { return }
        if let login = job.urlLogin {
            // The URL's own user and password (taken out of it when the task was made), as curl uses them.
            try handle.set(.credentials(user: login.user, password: login.password))
            return
        }
        guard let credentials = job.credentials else { return }
        let space = ProtectionSpace(host: host, port: url.port ?? scheme.spaceProtocol.defaultPort, protocol: scheme.spaceProtocol,
                                    realm: nil, authenticationMethod: .default)
        guard let credential = credentials.candidates(for: space).first else { return }
        report(.challenge(ChallengeReport(space: space, previousFailureCount: 0, proposed: credential.info)))
        credentials.used(credential)
        try handle.set(.credentials(user: credential.user, password: credential.password))
    }

    /// The response, once (on the first byte or at the end). A resumed download first checks that
    /// the file is the one its bytes came from; if not, the transfer stops and starts again from zero.
    func deliverRemoteResponse() {
        guard response == nil, !needsRestartFromZero else { return }
        let isUpload = bodyReader != nil || streamReader != nil
        let remaining = isUpload ? nil : handle.contentLength
        remoteModified = handle.fileTime.map(String.init)
        if file != nil {
            let total = remaining.map { base + $0 }
            if base > 0, let resumed = job.resume, Self.remoteFileChanged(resumed, total: total, modified: remoteModified) {
                needsRestartFromZero = true
                return
            }
            expectedTotal = total
        }
        // One transaction per task; its networkProtocolName is the scheme ("ftp", "ftps", "sftp").
        recorder.headArrived(handle, url: currentURL, method: currentMethod, statusCode: 0, viaProxy: proxyState.route != nil,
                             protocolName: remoteScheme?.rawValue)
        let listing = RemoteFileScheme.isListing(currentURL)
        var info = ResponseInfo(statusCode: 0, headers: [:], url: currentURL)
        info.mimeType = isUpload ? nil : listing ? "text/plain" : "application/octet-stream"
        info.expectedContentLength = remaining
        response = info
        report(.response(info))
        if file != nil, base > 0 { report(.resumed(offset: base, expectedTotal: expectedTotal)) }
    }

    /// Whether the remote file differs from the one a resumed download's bytes came from: another
    /// size, or another modification time (when both are known).
    static func remoteFileChanged(_ resumed: ResumeState, total: Int?, modified: String?) -> Bool {
        if let expected = resumed.expectedLength, expected != total { return true }
        if let before = resumed.lastModified, let modified, before != modified { return true }
        return false
    }

    /// libcurl finished this transfer with `code` (called before its outcome is read): a
    /// remote transfer that moved no byte gets its response now; a file now shorter than the
    /// resume offset (CURLE_BAD_DOWNLOAD_RESUME) starts again from zero.
    func remoteTransferEnded(_ code: CurlCode) {
        guard remoteScheme != nil, failure == nil else { return }
        if code.isOK {
            deliverRemoteResponse()
            failure = storedSizeCheck?.failure(sent: handle.bytesUploaded)
        } else if code == .badDownloadResume, file != nil, base > 0 {
            needsRestartFromZero = true
        }
    }

    /// Where a remote download stands: resumable once the file's size is known (the validator
    /// with its modification time); before any answer, as the resumed state it started from.
    func remoteResumeState(_ file: DownloadFile) -> ResumeState? {
        guard response != nil else {
            guard base > 0, var state = job.resume else { return nil }
            state.offset = file.written
            return state
        }
        guard let expectedTotal else { return nil }
        return ResumeState(offset: file.written, etag: nil, lastModified: remoteModified, expectedLength: expectedTotal)
    }
}
