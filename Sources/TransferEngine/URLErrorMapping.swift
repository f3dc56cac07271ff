internal import Curl
internal import TransferModel

/// The one table from libcurl result codes to URLError codes (as Foundation's
/// `urlErrorCode(for:)` does), so every transport failure reads as URLSession users expect.
package enum URLErrorMapping {
    static func code(for curl: CurlCode) -> URLErrorCode {
        switch curl {
        case .unsupportedProtocol: return .unsupportedURL
        case .urlMalformat: return .badURL
        case .couldntResolveHost, .couldntResolveProxy: return .cannotFindHost
        case .couldntConnect: return .cannotConnectToHost
        case .operationTimedOut: return .timedOut
        case .sendError, .recvError, .sendFailRewind, .partialFile, .gotNothing, .http2, .http2Stream: return .networkConnectionLost
        case .weirdServerReply: return .badServerResponse
        case .tooManyRedirects: return .httpTooManyRedirects
        // Measured with libcurl 7.88.1 (TLSTests): a handshake no version both sides allow
        // gives 35 (sslConnectError); an expired certificate, an unknown CA or a wrong name all
        // give 60 (peerFailedVerification, which CURLE_SSL_CACERT is an alias of); a pin that
        // does not match gives 90. A tlsCABundle OpenSSL cannot load is 77 (sslCACert), checked
        // when the session is created, so it would be the daemon's fault: secureConnectionFailed.
        case .sslConnectError, .sslCipher, .sslShutdownFailed, .sslEngineNotFound, .sslCertProblem, .sslCACert: return .secureConnectionFailed
        case .peerFailedVerification, .sslPinnedPubKeyNotMatch, .sslInvalidCertStatus, .sslIssuerError: return .serverCertificateUntrusted
        case .badContentEncoding: return .cannotDecodeContentData
        case .filesizeExceeded: return .dataLengthExceedsMaximum
        case .writeError: return .cannotWriteToFile
        case .abortedByCallback: return .cancelled
        case .loginDenied: return .userAuthenticationRequired
        case .remoteAccessDenied: return .noPermissionsToReadFile
        case .remoteFileNotFound: return .fileDoesNotExist
        case .proxy: return .cannotConnectToHost
        default: return .unknown
        }
    }

    static func error(for curl: CurlCode, detail: String?) -> TaskError {
        TaskError(code(for: curl), detail ?? curl.description)
    }

    /// What a task whose transfer or stream could not be set up ends with: a TaskError as
    /// thrown, a curl code mapped, anything else `unknown` with `failure` ("the transfer could
    /// not be started") before it.
    static func setupError(_ error: any Error, _ failure: String) -> TaskError {
        switch error {
        case let error as TaskError: error
        case let code as CurlCode: Self.error(for: code, detail: nil)
        default: TaskError(.unknown, "\(failure): \(error)")
        }
    }

    /// URLSession's mapping of a download's HTTP error status to a URLError.
    static func downloadError(status: Int) -> TaskError {
        switch status {
        case 401, 407: return TaskError(.userAuthenticationRequired, "the server answered \(status): authentication is required")
        case 403: return TaskError(.noPermissionsToReadFile, "the server answered 403: access is forbidden")
        default: return TaskError(.fileDoesNotExist, "the server answered \(status)")
        }
    }
}
