/// URLError.Code values as URLSession users know them (NSURLError*), with their names.
public enum URLErrorCode: Int, Codable, Sendable, CaseIterable {
    case unknown = -1
    case backgroundSessionInUseByAnotherProcess = -996
    case cancelled = -999
    case badURL = -1000
    case timedOut = -1001
    case unsupportedURL = -1002
    case cannotFindHost = -1003
    case cannotConnectToHost = -1004
    case networkConnectionLost = -1005
    case dnsLookupFailed = -1006
    case httpTooManyRedirects = -1007
    case resourceUnavailable = -1008
    case notConnectedToInternet = -1009
    case badServerResponse = -1011
    case userCancelledAuthentication = -1012
    case userAuthenticationRequired = -1013
    case zeroByteResource = -1014
    case cannotDecodeContentData = -1016
    case cannotParseResponse = -1017
    case fileDoesNotExist = -1100
    case fileIsDirectory = -1101
    case noPermissionsToReadFile = -1102
    case dataLengthExceedsMaximum = -1103
    case secureConnectionFailed = -1200
    case serverCertificateUntrusted = -1202
    case cannotCreateFile = -3000
    case cannotWriteToFile = -3003

    /// The Swift name users see in URLError.Code, e.g. "timedOut".
    public var name: String { String(describing: self) }
}

/// A task's error (URLError as JSON).
public struct TaskError: Codable, Sendable, Equatable, Error {
    public var code: Int
    public var name: String
    public var message: String
    @NullEncoded public var resumeData: String?
    /// A stable word for why, where the URLError code alone does not say: `network_policy` (a
    /// connection the daemon's network policy refused, `NetworkPolicy+Gate`),
    /// `destination_exists` (a download's destination was taken). Absent from the JSON otherwise.
    public var reason: String?

    public init(_ code: URLErrorCode, _ message: String, reason: String? = nil) {
        self.code = code.rawValue
        self.name = code.name
        self.message = message
        self.reason = reason
    }
}
