/// The DSCP code point (RFC 2474) a task's packets carry, from its request's service type: the
/// RFC 4594 service classes, as Apple's network stack maps NSURLRequest.NetworkServiceType
/// (net_qos_policy / SO_TRAFFIC_CLASS). Best effort (0) leaves sockets unmarked.
extension NetworkServiceType {
    public var dscp: Int {
        switch self {
        case .default: 0            // best effort (CS0)
        case .background: 8         // CS1, low-priority data (RFC 3662)
        case .responsiveData: 18    // AF21, low-latency data
        case .avStreaming: 26       // AF31, multimedia streaming
        case .video: 34             // AF41, multimedia conferencing
        case .responsiveAV: 32      // CS4, real-time interactive
        case .voice, .voip: 46      // EF, telephony (voip is the deprecated name of voice)
        case .callSignaling: 40     // CS5, signaling
        }
    }
}
