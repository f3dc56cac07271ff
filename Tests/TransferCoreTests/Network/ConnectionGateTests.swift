import Curl
import Foundation
import Synchronization
import Testing
import TestSupport

/// The Curl layer's connection gate on real libcurl transfers (`EasyHandle.perform`): it sees
/// the address curl is about to connect to, whatever spelled it; a refusal makes no connection
/// and is recorded; a proxy's connection is put to it as any other; an FTP data connection too.
@Suite struct ConnectionGateTests {
    /// A gate that records every address it is asked about and refuses those `refuses` picks.
    final class Recorder: Sendable {
        let asked = Mutex<[PeerAddress]>([])
        let refuses: @Sendable (PeerAddress, Int) -> Bool

        init(refuses: @escaping @Sendable (PeerAddress, Int) -> Bool) { self.refuses = refuses }

        var gate: ConnectionGate {
            ConnectionGate { [self] peer in
                let index = asked.withLock { asked in
                    asked.append(peer)
                    return asked.count - 1
                }
                return refuses(peer, index) ? "test rule" : nil
            }
        }

        var addresses: [PeerAddress] { asked.withLock { $0 } }
    }

    @Test func theGateJudgesTheResolvedAddressAndARefusalConnectsNowhere() throws {
        let origin = try OriginServer(address: "127.0.0.2") { _ in .text("inside") }
        defer { origin.stop() }
        // 2130706434 is 127.0.0.2: curl resolves the spelling, the gate sees the address.
        let url = "http://2130706434:\(origin.port)/x"
        let allowing = Recorder { _, _ in false }
        let allowed = try EasyHandle()
        try allowed.set(.url(url))
        try allowed.set(.connectionGate(allowing.gate))
        #expect(allowed.perform() == .ok)
        #expect(allowing.addresses == [PeerAddress(bytes: [127, 0, 0, 2], port: origin.port)])
        #expect(allowed.connectionRefusal == nil && origin.requests.count == 1)

        let refusing = Recorder { _, _ in true }
        let refused = try EasyHandle()
        try refused.set(.url(url))
        try refused.set(.connectionGate(refusing.gate))
        #expect(refused.perform() == .couldntConnect)
        #expect(refused.connectionRefusal?.peer == PeerAddress(bytes: [127, 0, 0, 2], port: origin.port))
        #expect(refused.connectionRefusal?.rule == "test rule")
        #expect(origin.connectionCount == 1, "the refused transfer connected")
    }

    @Test func anIPv4MappedLiteralReachesTheGateAsIPv6() throws {
        let origin = try OriginServer(address: "127.0.0.2") { _ in .text("inside") }
        defer { origin.stop() }
        let recorder = Recorder { _, _ in true }
        let handle = try EasyHandle()
        try handle.set(.url("http://[::ffff:127.0.0.2]:\(origin.port)/x"))
        try handle.set(.connectionGate(recorder.gate))
        #expect(handle.perform() == .couldntConnect)
        #expect(recorder.addresses == [PeerAddress(bytes: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 127, 0, 0, 2], port: origin.port)])
        #expect(origin.connectionCount == 0)
    }

    @Test func aConnectionToAProxyIsPutToTheGateToo() throws {
        // The "proxy" answers absolute-form requests itself.
        let proxy = try OriginServer { _ in .text("from the proxy") }
        defer { proxy.stop() }
        /// A new handle each time (no connection to reuse) fetching `path` through the proxy.
        func proxied(_ path: String, _ recorder: Recorder) throws -> EasyHandle {
            let handle = try EasyHandle()
            try handle.set(.url("http://origin.invalid" + path))
            try handle.set(.proxy("http://127.0.0.1:\(proxy.port)"))
            try handle.set(.connectionGate(recorder.gate))
            return handle
        }
        // Allowed: the gate saw the proxy's address, not the origin's (never resolved).
        let allowing = Recorder { _, _ in false }
        #expect(try proxied("/x", allowing).perform() == .ok)
        #expect(allowing.addresses == [PeerAddress(bytes: [127, 0, 0, 1], port: proxy.port)])
        #expect(proxy.requests.map(\.path) == ["http://origin.invalid/x"])

        // Refused: a proxy is no way around the gate.
        let refusing = Recorder { _, _ in true }
        #expect(try proxied("/y", refusing).perform() == .couldntConnect)
        #expect(refusing.addresses.count == 1 && proxy.requests.count == 1)
    }

    @Test func anFTPDataConnectionIsPutToTheGateToo() throws {
        let base = try Peers.fileServer(.ftp)
        let login = try Peers.fileServerLogin()
        let controlPort = Int(base.split(separator: ":").last ?? "") ?? 0
        // Allowed: two decisions, the control connection and the data connection (another port).
        let allowing = Recorder { _, _ in false }
        let handle = try EasyHandle()
        try handle.set(.url(base + "/hello.txt"))
        try handle.set(.credentials(user: login.user, password: login.password))
        try handle.set(.connectionGate(allowing.gate))
        #expect(handle.perform() == .ok)
        let asked = allowing.addresses
        #expect(asked.count == 2 && asked.allSatisfy { $0.bytes == [127, 0, 0, 1] }, "\(asked)")
        #expect(asked.first?.port == controlPort && asked.last?.port != controlPort, "\(asked)")

        // Refusing only the data connection fails the transfer, recorded as the gate's doing.
        let refusingData = Recorder { _, index in index > 0 }
        let refused = try EasyHandle()
        try refused.set(.url(base + "/hello.txt"))
        try refused.set(.credentials(user: login.user, password: login.password))
        try refused.set(.connectionGate(refusingData.gate))
        #expect(refused.perform() == .couldntConnect)
        #expect(refused.connectionRefusal != nil && refused.connectionRefusal?.peer.port != controlPort)
        // curl falls back from EPSV to PASV after the first refusal: that one is refused too.
        #expect(refusingData.addresses.count == 3 && refusingData.addresses.dropFirst().allSatisfy { $0.port != controlPort }, "\(refusingData.addresses)")
    }
}
