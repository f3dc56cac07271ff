import Curl
import Testing
@testable import TransferModel
@testable import TransferStore
@testable import TransferEngine
@testable import TransferService

/// The one table from libcurl result codes to URLError codes.
@Suite struct URLErrorMappingTests {
    /// Every code the table names, with the URLError code URLSession users expect.
    static let table: [(CurlCode, URLErrorCode)] = [
        (.unsupportedProtocol, .unsupportedURL),
        (.urlMalformat, .badURL),
        (.couldntResolveHost, .cannotFindHost),
        (.couldntResolveProxy, .cannotFindHost),
        (.couldntConnect, .cannotConnectToHost),
        (.operationTimedOut, .timedOut),
        (.sendError, .networkConnectionLost),
        (.recvError, .networkConnectionLost),
        (.partialFile, .networkConnectionLost),
        (.gotNothing, .networkConnectionLost),
        (.http2, .networkConnectionLost),
        (.http2Stream, .networkConnectionLost),
        (.weirdServerReply, .badServerResponse),
        (.tooManyRedirects, .httpTooManyRedirects),
        (.sslConnectError, .secureConnectionFailed),
        (.sslCipher, .secureConnectionFailed),
        (.sslShutdownFailed, .secureConnectionFailed),
        (.sslEngineNotFound, .secureConnectionFailed),
        (.sslCertProblem, .secureConnectionFailed),
        (.peerFailedVerification, .serverCertificateUntrusted),
        // A CA bundle OpenSSL cannot load is the daemon's side, not the server's certificate.
        (.sslCACert, .secureConnectionFailed),
        (.sslIssuerError, .serverCertificateUntrusted),
        (.sslPinnedPubKeyNotMatch, .serverCertificateUntrusted),
        (.sslInvalidCertStatus, .serverCertificateUntrusted),
        (.badContentEncoding, .cannotDecodeContentData),
        (.filesizeExceeded, .dataLengthExceedsMaximum),
        (.writeError, .cannotWriteToFile),
        (.abortedByCallback, .cancelled),
        (.loginDenied, .userAuthenticationRequired),
        (.remoteAccessDenied, .noPermissionsToReadFile),
        (.remoteFileNotFound, .fileDoesNotExist),
        (.proxy, .cannotConnectToHost),
    ]

    @Test(arguments: table)
    func mapsToTheURLErrorCode(curl: CurlCode, expected: URLErrorCode) {
        #expect(URLErrorMapping.code(for: curl) == expected)
    }

    /// The numbers are the ones URLSession users know (shared/URLSESSION.md, Errors).
    @Test(arguments: [
        (CurlCode.couldntResolveHost, -1003), (.couldntConnect, -1004), (.operationTimedOut, -1001),
        (.recvError, -1005), (.partialFile, -1005), (.gotNothing, -1005), (.sendError, -1005),
        (.tooManyRedirects, -1007), (.unsupportedProtocol, -1002), (.urlMalformat, -1000),
        (.weirdServerReply, -1011), (.abortedByCallback, -999), (.peerFailedVerification, -1202),
        (.sslConnectError, -1200), (.filesizeExceeded, -1103), (.badContentEncoding, -1016),
        (.writeError, -3003), (.remoteFileNotFound, -1100), (.remoteAccessDenied, -1102),
        (.loginDenied, -1013),
    ])
    func rawCodes(curl: CurlCode, raw: Int) {
        #expect(URLErrorMapping.code(for: curl).rawValue == raw)
        #expect(URLErrorMapping.error(for: curl, detail: nil).code == raw)
    }

    @Test(arguments: [CurlCode.outOfMemory, .rangeError, .readError, .uploadFailed, .httpReturnedError, .http3, CurlCode(rawValue: 9_999)])
    func anythingElseIsUnknown(curl: CurlCode) {
        #expect(URLErrorMapping.code(for: curl) == .unknown)
        #expect(URLErrorMapping.error(for: curl, detail: nil).code == -1)
    }

    @Test func errorCarriesNameAndMessage() {
        let withDetail = URLErrorMapping.error(for: .couldntConnect, detail: "Failed to connect to 127.0.0.1 port 9")
        #expect(withDetail.code == -1004)
        #expect(withDetail.name == "cannotConnectToHost")
        #expect(withDetail.message == "Failed to connect to 127.0.0.1 port 9")
        let plain = URLErrorMapping.error(for: .operationTimedOut, detail: nil)
        #expect(plain.name == "timedOut")
        #expect(plain.message == CurlCode.operationTimedOut.description)
        #expect(!plain.message.isEmpty)
    }

    @Test(arguments: [
        (URLErrorCode.cancelled, -999, "cancelled"), (.badURL, -1000, "badURL"), (.timedOut, -1001, "timedOut"),
        (.unsupportedURL, -1002, "unsupportedURL"), (.cannotFindHost, -1003, "cannotFindHost"),
        (.cannotConnectToHost, -1004, "cannotConnectToHost"), (.networkConnectionLost, -1005, "networkConnectionLost"),
        (.httpTooManyRedirects, -1007, "httpTooManyRedirects"), (.resourceUnavailable, -1008, "resourceUnavailable"),
        (.notConnectedToInternet, -1009, "notConnectedToInternet"), (.badServerResponse, -1011, "badServerResponse"),
        (.userCancelledAuthentication, -1012, "userCancelledAuthentication"),
        (.userAuthenticationRequired, -1013, "userAuthenticationRequired"), (.zeroByteResource, -1014, "zeroByteResource"),
        (.cannotDecodeContentData, -1016, "cannotDecodeContentData"), (.dataLengthExceedsMaximum, -1103, "dataLengthExceedsMaximum"),
        (.secureConnectionFailed, -1200, "secureConnectionFailed"), (.serverCertificateUntrusted, -1202, "serverCertificateUntrusted"),
        (.cannotCreateFile, -3000, "cannotCreateFile"), (.cannotWriteToFile, -3003, "cannotWriteToFile"),
        (.fileDoesNotExist, -1100, "fileDoesNotExist"), (.noPermissionsToReadFile, -1102, "noPermissionsToReadFile"),
        (.backgroundSessionInUseByAnotherProcess, -996, "backgroundSessionInUseByAnotherProcess"),
    ])
    func urlErrorCodesAsAppleNumbersThem(code: URLErrorCode, raw: Int, name: String) {
        #expect(code.rawValue == raw)
        #expect(code.name == name)
        let error = TaskError(code, "m")
        #expect(error.code == raw && error.name == name)
    }
}
