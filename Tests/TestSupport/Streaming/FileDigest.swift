public import Foundation
internal import LibCrypto

/// The SHA-256 of a file (lowercase hex), read 1 MiB at a time: for files too large to hold.
public func sha256(ofFile path: String) throws -> String {
    guard let handle = FileHandle(forReadingAtPath: path) else {
        throw CocoaError(.fileReadNoSuchFile, userInfo: [NSFilePathErrorKey: path])
    }
    defer { try? handle.close() }
    var hasher = StreamingHash(.sha256)
    while let piece = try handle.read(upToCount: 1 << 20), !piece.isEmpty {
        hasher.update(piece)
    }
    return hexString(hasher.finalize())
}

/// The SHA-256 of bytes in memory (lowercase hex).
public func sha256(of data: Data) -> String {
    hexString(HashFunction.sha256.hash(data))
}

/// An incremental SHA-256 (lowercase hex), for tests that do not import Crypto.
public struct StreamingSHA256 {
    private var hasher = StreamingHash(.sha256)
    public init() {}
    public mutating func update(_ bytes: UnsafeRawBufferPointer) { hasher.update(bytes) }
    public func finalize() -> String { hexString(hasher.finalize()) }
}
