import Foundation
import TestSupport
import Testing
@testable import TransferModel
@testable import TransferStore
@testable import TransferEngine
@testable import TransferService

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
        let capture = try PacketCapture(destinationPorts: origins.map(\.port), ipv6: ipv6)
        for (type, origin) in zip(Self.types, origins) {
            var request = RequestSpec(url: origin.url("/\(type.rawValue)"))
            request.networkServiceType = type
            let task = try harness.service.createTask(in: session, TaskCreate(kind: .data, request: request), owner: nil)
            let done = try await harness.completion(task.id, timeout: 10)
            #expect(done.error == nil, "\(type): \(String(describing: done.error))")
        }
        // At least the SYN, the request and the closing packets of every origin.
        let packets = capture.packets { seen in origins.allSatisfy { origin in seen.filter { $0.destinationPort == origin.port }.count >= 3 } }
        for (type, origin) in zip(Self.types, origins) {
            let seen = packets.filter { $0.destinationPort == origin.port }
            let classes = Set(seen.map(\.trafficClass))
            print("dscp \(ipv6 ? "IPv6" : "IPv4") \(type.rawValue): \(seen.count) packets, \(ipv6 ? "class" : "tos") \(classes.sorted().map { "0x" + String($0, radix: 16) }), want DSCP \(type.dscp) = 0x\(String(type.dscp << 2, radix: 16))")
            #expect(seen.count >= 3, "\(type): \(seen.count) packets captured\n\(capture.rawOutput)")
            #expect(classes == [type.dscp << 2], "\(type) over \(ipv6 ? "IPv6" : "IPv4")")
        }
    }

    /// A kept-alive connection opened for one service type and reused by a task of another is
    /// marked again before the second request goes (CURLOPT_PREREQFUNCTION), and back.
    @Test(arguments: [false, true])
    func reusedConnectionIsMarkedAgain(ipv6: Bool) async throws {
        let origin = try OriginServer(ipv6: ipv6) { _ in .respond(body: Data("kept alive".utf8)) }
        defer { origin.stop() }
        let harness = try ServiceHarness()
        defer { harness.stop() }
        let session = try harness.session()
        for type in [NetworkServiceType.voice, .background, .default, .video] {
            let capture = try PacketCapture(destinationPorts: [origin.port], ipv6: ipv6)
            var request = RequestSpec(url: origin.url("/\(type.rawValue)"))
            request.networkServiceType = type
            let task = try harness.service.createTask(in: session, TaskCreate(kind: .data, request: request), owner: nil)
            let done = try await harness.completion(task.id, timeout: 10)
            #expect(done.error == nil, "\(type): \(String(describing: done.error))")
            // The request's packets: an ACK of the previous response may still leave unmarked again.
            let requests = capture.packets { $0.contains { $0.payload > 0 } }.filter { $0.payload > 0 }
            #expect(!requests.isEmpty, "\(type): no request packet captured")
            let classes = Set(requests.map(\.trafficClass))
            print("dscp \(ipv6 ? "IPv6" : "IPv4") reused connection, \(type.rawValue): \(classes.sorted().map { "0x" + String($0, radix: 16) }), want 0x\(String(type.dscp << 2, radix: 16))")
            #expect(classes == [type.dscp << 2], "\(type) on a reused connection over \(ipv6 ? "IPv6" : "IPv4")")
        }
        #expect(origin.connectionCount == 1, "the tasks did not share one connection")
    }
}
