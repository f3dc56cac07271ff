/// URLRequest.NetworkServiceType: stored per session and per request; the scheduler maps it to a
/// scheduling class and a DSCP marking (issue 4). `voip` is accepted as deprecated.
public enum NetworkServiceType: String, Codable, Sendable, CaseIterable {
    case `default`, video, background, voice, responsiveData, avStreaming, responsiveAV, callSignaling, voip
}

/// URLRequest.CachePolicy names, stored and reported; the URL cache that honours them is issue 5.
public enum CachePolicy: String, Codable, Sendable, CaseIterable {
    case useProtocolCachePolicy, reloadIgnoringLocalCacheData, reloadIgnoringLocalAndRemoteCacheData
    case returnCacheDataElseLoad, returnCacheDataDontLoad, reloadRevalidatingCacheData
}

/// tls_protocol_version_t names used by tlsMinimum/MaximumSupportedProtocolVersion.
public enum TLSVersion: String, Codable, Sendable, CaseIterable {
    case TLSv10, TLSv11, TLSv12, TLSv13
}

/// HTTPCookie.AcceptPolicy.
public enum CookieAcceptPolicy: String, Codable, Sendable, CaseIterable {
    case always, never, onlyFromMainDocumentDomain
}
