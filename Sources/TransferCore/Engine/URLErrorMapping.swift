internal import Curl

/// The one table from libcurl result codes to URLError codes (as Foundation's
/// `urlErrorCode(for:)` does), so every transport failure reads as URLSession users expect.
enum URLErrorMapping {
    static func code(for curl: CurlCode) -> URLErrorCode {
        switch curl {
        case .unsupportedProtocol: return .unsupportedURL
        case .urlMalformat: return .badURL
        case .couldntResolveHost, .couldntResolveProxy: return .cannotFindHost
        case .couldntConnect: return .cannotConnectToHost
        case .operationTimedOut: return .timedOut
        case .sendError, .recvError, .partialFile, .gotNothing, .http2, .http2Stream: return .networkConnectionLost
        case .weirdServerReply: return .badServerResponse
        case .tooManyRedirects: return .httpTooManyRedirects
        case .sslConnectError, .sslCipher, .sslShutdownFailed, .sslEngineNotFound, .sslCertProblem: return .secureConnectionFailed
        case .peerFailedVerification, .sslCACert, .sslPinnedPubKeyNotMatch, .sslInvalidCertStatus: return .serverCertificateUntrusted
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
}
