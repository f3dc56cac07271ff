/// Byte comparison whose time depends only on the lengths, never on where the bytes differ:
/// token digests are compared with it so a client cannot learn a digest's prefix by timing.
enum ConstantTime {
    static func equal(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for index in a.indices { difference |= a[index] ^ b[index] }
        return difference == 0
    }
}
