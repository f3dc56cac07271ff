import Foundation
import TestSupport
import Testing
@testable import TransferCore

/// Each task's packets carry its service type's DSCP on the wire: tcpdump on loopback watches
/// what our sockets send to an in-process origin, over IPv4 and IPv6, one origin (port) per
/// service type so every packet says whose it is.
@Suite(.serialized) struct DSCPMarkingTests {
    static let types: [NetworkServiceType] = [.default, .background, .responsiveData, .avStreaming, .video, .responsiveAV, .voice, .callSignaling]

    @Test(arguments: [false, true])
    func packetsCarryTheServiceTypesCodePoint(ipv6: Bool) async throws {
        let origins = try Self.types.map { _ in
            // Connection: close, so no connection opened for one type is reused by another.
            try OriginServer(ipv6: ipv6) { _ in .respond(headers: ["Connection": "close"], body: Data("marked".utf8)) }
        }
        defer { for origin in origins { origin.stop() } }
        let harness = try ServiceHarness()
        defer { harness.stop() }
        let session = try harness.session()
        let capture = try PacketCapture(destinationPorts: origins.map(\.port))
        for (type, origin) in zip(Self.types, origins) {
            var request = RequestSpec(url: origin.url("/\(type.rawValue)"))
            request.networkServiceType = type
            let task = try harness.service.createTask(in: session, TaskCreate(kind: .data, request: request), owner: nil)
            let done = try await harness.completion(task.id, timeout: 10)
            #expect(done.error == nil, "\(type): \(String(describing: done.error))")
        }
        let packets = capture.packets()
        for (type, origin) in zip(Self.types, origins) {
            let seen = packets.filter { $0.destinationPort == origin.port }
            let classes = Set(seen.map(\.trafficClass))
            print("dscp \(ipv6 ? "IPv6" : "IPv4") \(type.rawValue): \(seen.count) packets, \(ipv6 ? "class" : "tos") \(classes.sorted().map { "0x" + String($0, radix: 16) }), want DSCP \(type.dscp) = 0x\(String(type.dscp << 2, radix: 16))")
            // At least the SYN, the request and the closing packets.
            #expect(seen.count >= 3, "\(type): \(seen.count) packets captured\n\(capture.rawOutput)")
            #expect(classes == [type.dscp << 2], "\(type) over \(ipv6 ? "IPv6" : "IPv4")")
        }
    }
}
