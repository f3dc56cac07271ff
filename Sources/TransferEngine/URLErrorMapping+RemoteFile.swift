internal import Curl
internal import TransferModel

/// The libcurl codes of ftp:, ftps: and sftp: transfers as URLError codes. Only for those
/// schemes: an HTTP transfer never sees most of these, and the few it shares (CURLE_UPLOAD_FAILED)
/// keep their HTTP meaning there.
extension URLErrorMapping {
    static func remoteFileCode(for curl: CurlCode) -> URLErrorCode {
        switch curl {
        // The server refused USER/PASS (FTP 530) or every SSH authentication method.
        case .loginDenied, .ftpWeirdPassReply: return .userAuthenticationRequired
        // FTP 550 to SIZE/RETR or CWD, SFTP "no such file".
        case .remoteFileNotFound, .ftpCouldntRetrFile: return .fileDoesNotExist
        // SFTP "permission denied", or an FTP folder that cannot be entered.
        case .remoteAccessDenied: return .noPermissionsToReadFile
        // The data connection could not be set up (EPSV/PASV answer unusable, or unreachable).
        case .ftpWeirdPasvReply, .ftpWeird227Format, .ftpCantGetHost, .ftpAcceptFailed, .ftpPortFailed: return .cannotConnectToHost
        case .ftpCouldntSetType, .ftpCouldntUseRest, .quoteError, .badDownloadResume: return .badServerResponse
        // STOR refused, or the server's disk is full.
        case .uploadFailed, .remoteDiskFull, .remoteFileExists: return .resourceUnavailable
        // AUTH TLS refused (ftpRequiresTLS), or the SSH handshake failed.
        case .useSSLFailed, .ssh: return .secureConnectionFailed
        // Also an SFTP host key missing from known_hosts or different (CURLKHSTAT_REJECT).
        case .peerFailedVerification: return .serverCertificateUntrusted
        default: return code(for: curl)
        }
    }

    static func remoteFileError(for curl: CurlCode, detail: String?) -> TaskError {
        TaskError(remoteFileCode(for: curl), detail ?? curl.description)
    }
}
