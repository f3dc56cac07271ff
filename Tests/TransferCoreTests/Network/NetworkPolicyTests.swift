import Testing
@testable import TransferModel
@testable import TransferStore
@testable import TransferEngine
@testable import TransferService

/// The network policy as a value (issue 16, "Reaching inside"): CIDR ranges of both families,
/// IPv4-mapped IPv6 addresses judged as the IPv4 address they reach, allow winning over deny
/// for its range, and the default that follows the listen address.
@Suite struct NetworkPolicyTests {
    private func address(_ text: String) throws -> IPAddress { try #require(IPAddress(text), "\(text)") }

    private func refuses(_ policy: NetworkPolicy, _ text: String) throws -> Bool { policy.refusal(for: try address(text)) != nil }

    @Test(arguments: [
        ("10.0.0.0/8", "10.0.0.0/8"), ("10.1.2.3/8", "10.0.0.0/8"), ("169.254.169.254", "169.254.169.254/32"),
        (" 192.168.0.0/16 ", "192.168.0.0/16"), ("0.0.0.0/0", "0.0.0.0/0"), ("fc00::/7", "fc00::/7"), ("::1", "::1/128"),
        ("fe80::1/10", "fe80::/10"), ("::/0", "::/0"), ("::ffff:10.0.0.0/104", "10.0.0.0/8"), ("::ffff:127.0.0.2", "127.0.0.2/32"),
    ])
    func parsesRangesOfBothFamilies(text: String, expected: String) throws {
        #expect(try NetworkRange(text).description == expected)
    }

    @Test(arguments: ["", "10.0.0.0/33", "10.0.0.0/", "10.0.0.0/-1", "10.0.0.0/+8", "10/8", "0177.0.0.1", "2130706433", "10.0.0.0/8/8",
                      "fc00::/129", "[::1]/128", "example.com", "10.0.0.0 /8", "10.0.0.0/٨"])
    func refusesMalformedRangesNamingThem(text: String) {
        #expect(throws: NetworkRange.Malformed(text: text)) { try NetworkRange(text) }
        #expect("\(NetworkRange.Malformed(text: text))".contains("\"\(text)\""))
    }

    @Test func readsCommaListsSkippingEmptyItems() throws {
        #expect(try NetworkRange.list("127.0.0.2/32, ::1 ,,10.0.0.0/8").map(\.description) == ["127.0.0.2/32", "::1/128", "10.0.0.0/8"])
        #expect(try NetworkRange.list("").isEmpty)
        #expect(throws: NetworkRange.Malformed(text: "bogus")) { try NetworkRange.list("127.0.0.1,bogus") }
    }

    @Test func matchesAddressesOfItsFamilyOnly() throws {
        let v4 = try NetworkRange("10.0.0.0/8"), v6 = try NetworkRange("fc00::/7"), rfc1918 = try NetworkRange("172.16.0.0/12")
        let inV4 = try address("10.255.0.1"), outV4 = try address("11.0.0.1"), ula = try address("fd00::1"), ula2 = try address("fc12:3456::")
        let outV6 = try address("fe00::1"), compatible = try address("::a00:1"), edge = try address("172.31.255.255"), past = try address("172.32.0.0")
        #expect(v4.contains(inV4) && !v4.contains(outV4))
        #expect(v6.contains(ula) && v6.contains(ula2) && !v6.contains(outV6))
        #expect(!v6.contains(inV4) && !v4.contains(compatible))
        #expect(rfc1918.contains(edge) && !rfc1918.contains(past))
    }

    @Test func judgesIPv4MappedAddressesAsTheirIPv4Address() throws {
        let policy = NetworkPolicy(deny: [try NetworkRange("127.0.0.2/32")])
        #expect(try refuses(policy, "127.0.0.2") && refuses(policy, "::ffff:127.0.0.2") && refuses(policy, "::ffff:7f00:2"))
        #expect(try !refuses(policy, "127.0.0.1") && !refuses(policy, "::ffff:127.0.0.1"))
        // A mapped range is its IPv4 range; an IPv6 range never holds a mapped address.
        let mapped = NetworkPolicy(deny: [try NetworkRange("::ffff:10.0.0.0/104")])
        #expect(try refuses(mapped, "10.9.9.9") && refuses(mapped, "::ffff:10.9.9.9"))
        #expect(try !refuses(NetworkPolicy(deny: [try NetworkRange("::/0")]), "::ffff:10.9.9.9"))
        #expect(try refuses(NetworkPolicy(deny: [try NetworkRange("::/0")]), "2001:db8::1"))
    }

    @Test func allowWinsOverDenyForItsRange() throws {
        let policy = NetworkPolicy(deny: [try NetworkRange("127.0.0.0/8")], allow: [try NetworkRange("127.0.0.2/32")])
        #expect(try !refuses(policy, "127.0.0.2") && !refuses(policy, "::ffff:127.0.0.2"))
        #expect(try refuses(policy, "127.0.0.1") && refuses(policy, "127.0.0.3"))
        #expect(policy.refusal(for: try address("127.0.0.1")) == "--deny-networks 127.0.0.0/8")
        // Allowing everything opens the default ranges too.
        let open = NetworkPolicy.forListener(loopbackOnly: false, allow: try NetworkRange.list("0.0.0.0/0,::/0"))
        #expect(try !refuses(open, "169.254.169.254") && !refuses(open, "::1") && !refuses(open, "::ffff:10.1.2.3"))
    }

    @Test(arguments: ["169.254.169.254", "10.1.2.3", "::ffff:10.1.2.3", "fd00::1", "fd00:ec2::254", "100.64.0.1", "100.127.255.255",
                      "127.0.0.1", "127.0.0.2", "::1", "::ffff:127.0.0.1", "172.16.0.1", "192.168.1.1", "fe80::1", "0.0.0.0", "::",
                      "224.0.0.1", "ff02::1", "::ffff:169.254.169.254"])
    func aNonLoopbackListenerRefusesTheSpecialNetworksByDefault(text: String) throws {
        let policy = NetworkPolicy.forListener(loopbackOnly: false)
        let rule = try #require(policy.refusal(for: try address(text)), "\(text) allowed")
        #expect(rule.contains("--allow-networks"), "\(rule)")
        #expect(try !refuses(NetworkPolicy.forListener(loopbackOnly: true), text), "a loopback listener refuses \(text)")
    }

    @Test(arguments: ["93.184.216.34", "100.128.0.1", "100.63.255.255", "172.32.0.1", "2001:db8::1", "2606:4700::1111", "::ffff:93.184.216.34", "1.1.1.1"])
    func aNonLoopbackListenerAllowsPublicAddresses(text: String) throws {
        #expect(try !refuses(NetworkPolicy.forListener(loopbackOnly: false), text))
    }

    @Test func aLoopbackListenerAllowsEverythingAndNeedsNoGate() throws {
        let policy = NetworkPolicy.forListener(loopbackOnly: true)
        #expect(policy == .allowAll && policy.allowsEverything && policy.connectionGate == nil)
        #expect(NetworkPolicy.forListener(loopbackOnly: false).connectionGate != nil)
        // Flags apply on loopback too.
        let denied = NetworkPolicy.forListener(loopbackOnly: true, deny: [try NetworkRange("127.0.0.2/32")])
        #expect(try refuses(denied, "127.0.0.2") && !refuses(denied, "127.0.0.1") && !refuses(denied, "10.1.2.3"))
    }

    @Test func aRefusalIsCannotConnectToHostWithItsOwnReasonAndNeverRetried() throws {
        let error = TaskError(.cannotConnectToHost, "x", reason: TaskError.networkPolicyReason)
        #expect(error.isNetworkPolicyRefusal && !TaskError(.cannotConnectToHost, "x").isNetworkPolicyRefusal)
        #expect(!TusUpload.isTransient(error) && TusUpload.isTransient(TaskError(.cannotConnectToHost, "x")))
    }
}
