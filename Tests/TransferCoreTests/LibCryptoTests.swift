import Foundation
import LibCrypto
import Testing
import TestSupport

/// The thin layer over OpenSSL's libcrypto against published answers: the hashes of "abc"
/// (FIPS 180 and RFC 1321), RFC 4231's HMAC-SHA256 case 2, and RFC 8439's AEAD example, whose
/// sealed box (nonce || ciphertext || tag) is the layout swift-crypto sealed credentials and
/// resume data in before this layer replaced it.
@Suite struct LibCryptoTests {
    static func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

    @Test(arguments: [
        (HashFunction.md5, "900150983cd24fb0d6963f7d28e17f72"),
        (.sha1, "a9993e364706816aba3e25717850c26c9cd0d89d"),
        (.sha256, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        (.sha384, "cb00753f45a35e8bb5a03d699ac65007272c32ab0eded1631a8b605a43ff5bed8086072ba1e7cc2358baeca134c825a7"),
        (.sha512, "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f"),
    ])
    func theHashOfABCIsThePublishedOne(_ function: HashFunction, _ expected: String) {
        #expect(Self.hex(function.hash(Data("abc".utf8))) == expected)
        // Fed in pieces, read in the middle, and copied: each goes on from where it was.
        var hash = StreamingHash(function)
        hash.update(Data("a".utf8))
        let copy = hash
        #expect(hash.finalize() == function.hash(Data("a".utf8)))
        hash.update(Data("bc".utf8))
        #expect(Self.hex(hash.finalize()) == expected)
        #expect(copy.finalize() == function.hash(Data("a".utf8)))
    }

    @Test func hmacSHA256IsRFC4231sCaseTwoAndComparesWholeCodes() {
        let key = Data("Jefe".utf8)
        let message = Data("what do ya want for nothing?".utf8)
        let code = HMACSHA256.code(for: message, key: key)
        #expect(Self.hex(code) == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
        #expect(HMACSHA256.isValid(code, for: message, key: key))
        var altered = code
        altered[31] ^= 1
        #expect(!HMACSHA256.isValid(altered, for: message, key: key))
        #expect(!HMACSHA256.isValid(Array(code.prefix(16)), for: message, key: key))
        #expect(!HMACSHA256.isValid(code, for: message, key: Data("jefe".utf8)))
        #expect(HMACSHA256.code(for: Data(), key: Data()).count == 32)
    }

    static let key = Data((0x80...0x9f).map { UInt8($0) })
    static let aad = Data(TestSupport.bytes(hex: "50515253c0c1c2c3c4c5c6c7"))
    static let plaintext = Data("Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the future, sunscreen would be it.".utf8)
    static let rfc8439Box = Data(TestSupport.bytes(hex: """
        070000004041424344454647d31a8d34648e60db7b86afbc53ef7ec2a4aded51296e08fea9e2b5a736ee62d63dbea45e8c\
        a9671282fafb69da92728b1a71de0a9e060b2905d6a5b67ecd3b3692ddbd7f2d778b8c9803aee328091b58fab324e4fad6\
        75945585808b4831d7bc3ff4def08e4b7a9de576d26586cec64b61161ae10b594f09e26a7e902ecbd0600691
        """))

    @Test func rfc8439sSealedBoxOpensAndAnyChangeIsRefused() throws {
        #expect(try ChaChaPoly.open(Self.rfc8439Box, key: Self.key, authenticating: Self.aad) == Self.plaintext)
        for index in [0, 12, Self.rfc8439Box.count - 1] {
            var altered = Self.rfc8439Box
            altered[index] ^= 1
            #expect(throws: ChaChaPoly.Failure.self) { try ChaChaPoly.open(altered, key: Self.key, authenticating: Self.aad) }
        }
        #expect(throws: ChaChaPoly.Failure.self) { try ChaChaPoly.open(Self.rfc8439Box, key: Self.key, authenticating: Data("other".utf8)) }
        #expect(throws: ChaChaPoly.Failure.self) { try ChaChaPoly.open(Self.rfc8439Box.prefix(27), key: Self.key, authenticating: Self.aad) }
        #expect(throws: ChaChaPoly.Failure.self) { try ChaChaPoly.open(Self.rfc8439Box, key: Self.key.prefix(16), authenticating: Self.aad) }
    }

    @Test func aSealedBoxOpensWithItsKeyAndDataOnlyAndEachHasAFreshNonce() throws {
        let first = try ChaChaPoly.seal(Self.plaintext, key: Self.key, authenticating: Self.aad)
        let second = try ChaChaPoly.seal(Self.plaintext, key: Self.key, authenticating: Self.aad)
        #expect(first.count == 12 + Self.plaintext.count + 16)
        #expect(first.prefix(12) != second.prefix(12))
        #expect(try ChaChaPoly.open(first, key: Self.key, authenticating: Self.aad) == Self.plaintext)
        let otherKey = Data(try SecureRandom.bytes(32))
        #expect(throws: ChaChaPoly.Failure.self) { try ChaChaPoly.open(first, key: otherKey, authenticating: Self.aad) }
        // Empty plaintext and empty authenticated data are a valid box too.
        let empty = try ChaChaPoly.seal(Data(), key: Self.key, authenticating: Data())
        #expect(empty.count == 28)
        #expect(try ChaChaPoly.open(empty, key: Self.key, authenticating: Data()) == Data())
    }
}
