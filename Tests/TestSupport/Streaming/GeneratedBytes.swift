public import Foundation
internal import LibCrypto

/// A deterministic resource of any size (1 GiB and more) that never exists whole in memory:
/// a 1 MiB pseudo-random block (SplitMix64 from `seed`) repeated, with the first 8 bytes of
/// every 4 KiB page replaced by that page's index (little-endian). Any byte range can be made
/// on demand, so a server can serve `Range`s of it and a client can stream it.
///
/// A copy shifted by any amount differs from the original: by a multiple of 4 KiB the page
/// indexes differ, by anything else the random block does.
public struct GeneratedBytes: Sendable {
    public static let blockSize = 1 << 20
    public static let pageSize = 4096

    /// The resource's size in bytes.
    public let count: Int
    private let block: [UInt8]

    public init(count: Int, seed: UInt64) {
        precondition(count >= 0)
        self.count = count
        var state = seed
        var words = [UInt64](repeating: 0, count: Self.blockSize / 8)
        for index in words.indices { words[index] = splitMix64(&state) }
        block = words.withUnsafeBytes { Array($0) }
    }

    /// Copies the bytes from `offset` on into `buffer` (its whole length, which must not run past
    /// `count`).
    public func fill(_ buffer: UnsafeMutableRawBufferPointer, from offset: Int) {
        precondition(offset >= 0 && offset + buffer.count <= count, "range past the resource")
        guard let base = buffer.baseAddress, buffer.count > 0 else { return }
        block.withUnsafeBytes { source in
            var done = 0
            while done < buffer.count {
                let position = (offset + done) % Self.blockSize
                let length = min(Self.blockSize - position, buffer.count - done)
                (base + done).copyMemory(from: source.baseAddress! + position, byteCount: length)
                done += length
            }
        }
        let end = offset + buffer.count
        var page = offset / Self.pageSize
        while page * Self.pageSize < end {
            withUnsafeBytes(of: UInt64(page).littleEndian) { stamp in
                for index in 0..<8 {
                    let position = page * Self.pageSize + index
                    if position >= offset && position < end { base.storeBytes(of: stamp[index], toByteOffset: position - offset, as: UInt8.self) }
                }
            }
            page += 1
        }
    }

    /// The bytes in `range`, as one value (for small ranges).
    public func data(_ range: Range<Int>) -> Data {
        var data = Data(count: range.count)
        data.withUnsafeMutableBytes { fill($0, from: range.lowerBound) }
        return data
    }

    /// Calls `body` with consecutive pieces of the whole resource, `pieceSize` bytes each (the
    /// last one shorter), reusing one buffer.
    public func forEachPiece(size pieceSize: Int = 1 << 20, _ body: (UnsafeRawBufferPointer) throws -> Void) rethrows {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, pieceSize), alignment: 16)
        defer { buffer.deallocate() }
        var offset = 0
        while offset < count {
            let piece = UnsafeMutableRawBufferPointer(rebasing: buffer[0..<min(pieceSize, count - offset)])
            fill(piece, from: offset)
            try body(UnsafeRawBufferPointer(piece))
            offset += piece.count
        }
    }

    /// The SHA-256 of the whole resource, lowercase hex.
    public func sha256() -> String {
        var hasher = StreamingHash(.sha256)
        forEachPiece { hasher.update($0) }
        return hexString(hasher.finalize())
    }
}

/// Lowercase hex of a digest.
func hexString(_ digest: some Sequence<UInt8>) -> String {
    digest.map { String(format: "%02x", $0) }.joined()
}

/// The bytes of a hex string written in a test (two digits a byte; a bad digit traps).
public func bytes(hex: String) -> [UInt8] {
    var bytes: [UInt8] = []
    var index = hex.startIndex
    while index < hex.endIndex {
        let next = hex.index(index, offsetBy: 2)
        bytes.append(UInt8(hex[index..<next], radix: 16)!)
        index = next
    }
    return bytes
}

/// SplitMix64: a tiny seeded generator, the same sequence on every machine.
/// - SeeAlso: https://prng.di.unimi.it/splitmix64.c
public func splitMix64(_ state: inout UInt64) -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
}

/// A seeded random number generator for tests that must be replayable (print the seed).
public struct SeededGenerator: RandomNumberGenerator, Sendable {
    private var state: UInt64
    public init(seed: UInt64) { state = seed }
    public mutating func next() -> UInt64 { splitMix64(&state) }
}
