/// URLRequest.NetworkServiceType: stored per session and per request; the scheduler maps it to a
/// scheduling class and a DSCP marking (issue 4). `voip` is accepted as deprecated.
public enum NetworkServiceType: String, Codable, Sendable, CaseIterable {
    case `default`, video, background, voice, responsiveData, avStreaming, responsiveAV, callSignaling, voip

    /// The scheduling class a task of this service type is admitted in (docs/scheduling.md).
    public var schedulingClass: SchedulingClass {
        switch self {
        case .voice, .voip, .callSignaling, .responsiveData, .responsiveAV: .interactive
        case .video, .avStreaming: .streaming
        case .default: .default
        case .background: .background
        }
    }
}

/// The scheduler's classes, in admission order: a queued task of an earlier class is admitted
/// before any of a later one; within a class, higher priority first, then arrival. Background
/// transfers are preempted when an earlier class needs their slot.
public enum SchedulingClass: String, Codable, Sendable, CaseIterable, Comparable {
    /// Someone waits on the answer (voice, call signalling, responsive data and AV).
    case interactive
    /// Media that plays as it arrives (video, avStreaming).
    case streaming
    case `default`
    /// Work nobody waits on: runs on what is left and yields its slot.
    case background

    package var rank: Int { Self.allCases.firstIndex(of: self)! }

    public static func < (a: SchedulingClass, b: SchedulingClass) -> Bool { a.rank < b.rank }
}

/// URLRequest.CachePolicy: what the URL cache does for a GET data task (`CacheDecision`).
public enum CachePolicy: String, Codable, Sendable, CaseIterable {
    case useProtocolCachePolicy, reloadIgnoringLocalCacheData, reloadIgnoringLocalAndRemoteCacheData
    case returnCacheDataElseLoad, returnCacheDataDontLoad, reloadRevalidatingCacheData
}

/// tls_protocol_version_t names used by tlsMinimum/MaximumSupportedProtocolVersion.
public enum TLSVersion: String, Codable, Sendable, CaseIterable {
    case TLSv10, TLSv11, TLSv12, TLSv13

    /// The version TLS writes on the wire as `number` (0x0301 is TLS 1.0 ... 0x0304 TLS 1.3).
    package init?(wireNumber number: Int) {
        switch number {
        case 0x0301: self = .TLSv10
        case 0x0302: self = .TLSv11
        case 0x0303: self = .TLSv12
        case 0x0304: self = .TLSv13
        default: return nil
        }
    }
}

/// HTTPCookie.AcceptPolicy.
public enum CookieAcceptPolicy: String, Codable, Sendable, CaseIterable {
    case always, never, onlyFromMainDocumentDomain
}
