import LibCrypto
import Foundation
import Glibc
import Testing
import TestSupport
@testable import TransferModel
@testable import TransferStore
@testable import TransferEngine
@testable import TransferService

/// The digest of a partial file (`DownloadFile` + `DownloadDigest`), without the engine: bytes
/// hashed as written, a resumed file's kept prefix read back once (spread over later writes), a
/// cut file hashed again, and a mismatch that deletes the file instead of moving it.
@Suite struct DownloadDigestTests {
    static func hex(_ bytes: some Sequence<UInt8>) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

    /// 10 MiB: a kept prefix of 9 MiB takes three writes' catch-up budgets to read back.
    static let body = Data(count: 10 << 20) { UInt8(truncatingIfNeeded: $0 &* 13 &+ $0 >> 13) }

    private func target(_ folder: TempDirectory, checksum: Checksum? = nil) -> DownloadTarget {
        // The downloads root exists (a destination's folder must resolve inside it).
        try? FileManager.default.createDirectory(atPath: folder.path + "/downloads", withIntermediateDirectories: true)
        return DownloadTarget(partialPath: folder.path + "/partial/1.part", destinationPath: folder.path + "/downloads/out.bin",
                       defaultDirectory: folder.path + "/files/1", root: folder.path + "/downloads", checksum: checksum)
    }

    private func write(_ file: DownloadFile, _ data: Data, chunk: Int) {
        var offset = 0
        while offset < data.count {
            let piece = data.subdata(in: offset..<min(data.count, offset + chunk))
            let written = file.write(piece.bytes)
            #expect(written)
            offset += piece.count
        }
    }

    @Test(arguments: [0, 1, 4096, 9 << 20, 10 << 20])
    func aResumedFileHashesItsKeptPrefixAndTheRest(keptBytes: Int) throws {
        let folder = try TempDirectory(prefix: "download-digest")
        defer { folder.remove() }
        let sha512 = Self.hex(HashFunction.sha512.hash(Self.body))
        let checksum = Checksum(algorithm: .sha512, hex: sha512)
        let first = try DownloadFile(target: target(folder, checksum: checksum))
        write(first, Self.body.prefix(keptBytes), chunk: 512 << 10)
        // Its offset is read as a checkpoint or resume data reads it (gathered bytes are written
        // out then); then the process "dies": the file stays, nothing of the hash state survives.
        #expect(first.written == keptBytes)
        let second = try DownloadFile(target: target(folder, checksum: checksum), resumeAt: keptBytes)
        #expect(second.written == keptBytes)
        write(second, Self.body.subdata(in: keptBytes..<Self.body.count), chunk: 64 << 10)
        let location = try second.finish(suggestedFilename: nil).path
        #expect(second.finalDigest?[.sha512] == sha512)
        #expect(second.finalDigest?[.sha256] == Self.hex(HashFunction.sha256.hash(Self.body)))
        #expect(byteDifference(try Data(contentsOf: URL(fileURLWithPath: location)), Self.body) == nil)
    }

    /// Past `inlineBytes` the hashing moves off the engine thread: the digests are those of the
    /// whole body whatever the chunks, on either side of the move and across it.
    @Test(arguments: [1, 100_003, 1 << 20, 3 << 20])
    func aBigDownloadIsHashedOffThreadToTheSameDigest(chunk: Int) throws {
        let folder = try TempDirectory(prefix: "download-digest")
        defer { folder.remove() }
        let body = Data(Self.body.prefix(chunk == 1 ? DownloadDigest.inlineBytes + 4096 : (3 << 20) + 17))
        let sha384 = Self.hex(HashFunction.sha384.hash(body))
        let file = try DownloadFile(target: target(folder, checksum: Checksum(algorithm: .sha384, hex: sha384)))
        if chunk == 1 {
            // Byte by byte around the boundary: the last inline byte, then the first handed over.
            write(file, Data(body.prefix(DownloadDigest.inlineBytes - 2)), chunk: 1 << 20)
            write(file, Data(body.dropFirst(DownloadDigest.inlineBytes - 2)), chunk: 1)
        } else {
            write(file, body, chunk: chunk)
        }
        _ = try file.finish(suggestedFilename: nil)
        #expect(file.finalDigest?[.sha384] == sha384)
        #expect(file.finalDigest?[.sha256] == Self.hex(HashFunction.sha256.hash(body)))
    }

    /// Past `inlineBytes` writes are gathered (`GatheredWrites`): whatever asks where the file
    /// stands (its length for resume data, a descriptor to sync for a checkpoint) finds every
    /// byte written in it, and the digest is the same.
    @Test func gatheredBytesAreInTheFileWheneverItsLengthOrADescriptorIsAskedFor() throws {
        let folder = try TempDirectory(prefix: "download-digest")
        defer { folder.remove() }
        let file = try DownloadFile(target: target(folder))
        let path = folder.path + "/partial/1.part"
        func size() -> Int { (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? -1 }
        func sizeThroughDescriptor() -> Int {
            let descriptor = file.duplicateDescriptor()
            defer { close(descriptor) }
            return Int(lseek(descriptor, 0, SEEK_END))
        }
        let first = DownloadDigest.inlineBytes + 3 * 16384 + 100
        write(file, Self.body.prefix(first), chunk: 16384)
        #expect(sizeThroughDescriptor() == first)
        let second = first + GatheredWrites.size + 5
        write(file, Self.body.subdata(in: first..<second), chunk: 16384)
        #expect(file.written == second)
        #expect(size() == second)
        write(file, Self.body.subdata(in: second..<Self.body.count), chunk: 16384)
        let location = try file.finish(suggestedFilename: nil).path
        #expect(byteDifference(try Data(contentsOf: URL(fileURLWithPath: location)), Self.body) == nil)
        #expect(file.finalDigest?[.sha256] == Self.hex(HashFunction.sha256.hash(Self.body)))
    }

    /// Gathered bytes nobody asked for are never written after the fact: once a second
    /// `DownloadFile` has the partial file (a resume after the first was let go), a late write of
    /// the first one's would land in the middle of it. The resume finds the file as it is.
    @Test func gatheredBytesAreNotWrittenAsTheFileIsLetGo() throws {
        let folder = try TempDirectory(prefix: "download-digest")
        defer { folder.remove() }
        let path = folder.path + "/partial/1.part"
        let counted = DownloadDigest.inlineBytes + 5000
        var first: DownloadFile? = try DownloadFile(target: target(folder))
        write(try #require(first), Self.body.prefix(counted), chunk: 16384)
        let second = try DownloadFile(target: target(folder), resumeAt: counted)
        let found = second.written
        #expect(found >= DownloadDigest.inlineBytes && found < counted, "the gathered tail is not in the file yet")
        first = nil
        #expect((try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) == found)
        write(second, Self.body.subdata(in: found..<Self.body.count), chunk: 16384)
        _ = try second.finish(suggestedFilename: nil)
        #expect(second.finalDigest?[.sha256] == Self.hex(HashFunction.sha256.hash(Self.body)))
    }

    /// Hashing read back from the file says when the file does not hold the bytes counted (a
    /// read that comes short): no digest rather than one of other bytes.
    @Test func aReadBackThatComesShortGivesNoDigest() throws {
        let folder = try TempDirectory(prefix: "download-digest")
        defer { folder.remove() }
        let path = folder.path + "/file"
        let data = Data(Self.body.prefix(3 << 20))
        try data.write(to: URL(fileURLWithPath: path))
        let descriptor = open(path, O_RDONLY)
        #expect(descriptor >= 0)
        defer { close(descriptor) }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 << 10, alignment: 16)
        defer { buffer.deallocate() }
        var whole = DigestAccumulator()
        let wholeRead = whole.update(reading: 0..<data.count, of: descriptor, through: buffer)
        #expect(wholeRead)
        #expect(whole.digest()[.sha256] == Self.hex(HashFunction.sha256.hash(data)))
        var beyond = DigestAccumulator()
        let beyondRead = beyond.update(reading: 0..<(data.count + 1), of: descriptor, through: buffer)
        #expect(!beyondRead)

        let fromThere = try #require(OffThreadDigest(continuing: DigestAccumulator(), at: 0, descriptor: descriptor))
        fromThere.written(upTo: data.count)
        #expect(fromThere.finish(upTo: data.count)?.digest()[.sha256] == Self.hex(HashFunction.sha256.hash(data)))
        let pastTheEnd = try #require(OffThreadDigest(continuing: DigestAccumulator(), at: 0, descriptor: descriptor))
        #expect(pastTheEnd.finish(upTo: data.count + 4096) == nil)
    }

    /// A 206 that starts before the file's end cuts it (`truncate`): bytes hashed past the cut
    /// must not count twice.
    @Test func aFileCutBackIsHashedFromWhatItKeeps() throws {
        let folder = try TempDirectory(prefix: "download-digest")
        defer { folder.remove() }
        let file = try DownloadFile(target: target(folder))
        write(file, Self.body.prefix(3 << 20), chunk: 512 << 10)
        file.truncate(to: 2 << 20)
        write(file, Self.body.subdata(in: (2 << 20)..<Self.body.count), chunk: 512 << 10)
        _ = try file.finish(suggestedFilename: nil)
        #expect(file.finalDigest?[.sha256] == Self.hex(HashFunction.sha256.hash(Self.body)))
    }

    /// Whoever still holds the old partial file open (in a cluster, a node that lost its lease
    /// and has not noticed yet) writes into that file only: a download that starts from zero,
    /// from its start or when a range is refused, is a new file, so no late byte of another
    /// version mixes into it.
    @Test func aStartFromZeroIsANewFileThatAStaleWriterCannotReach() throws {
        let folder = try TempDirectory(prefix: "download-digest")
        defer { folder.remove() }
        let old = Data(repeating: 0xEE, count: 1 << 20)
        for restartInPlace in [false, true] {
            let first = try DownloadFile(target: target(folder))
            write(first, old.prefix(512 << 10), chunk: 256 << 10)
            // The stale holder's descriptor, as a lost lease's node keeps it.
            let stale = open(folder.path + "/partial/1.part", O_WRONLY | O_CLOEXEC)
            #expect(stale >= 0)
            defer { Glibc.close(stale) }
            let file: DownloadFile
            if restartInPlace {
                // The successor's 200 answered its range (the resource changed): it starts over.
                file = first
                file.startOver()
            } else {
                // The successor starts from zero over the file it found.
                file = try DownloadFile(target: target(folder))
            }
            write(file, Self.body.prefix(1 << 20), chunk: 256 << 10)
            // The stale holder writes on at its offsets, after and before the successor's end.
            let late = old.withUnsafeBytes { pwrite(stale, $0.baseAddress!, 256 << 10, 0) }
            #expect(late == 256 << 10)
            let placed = try file.finish(suggestedFilename: nil).path
            #expect(byteDifference(try Data(contentsOf: URL(fileURLWithPath: placed)), Self.body.prefix(1 << 20)) == nil,
                    "a stale writer's bytes reached the download (restart in place: \(restartInPlace))")
            #expect(file.finalDigest?[.sha256] == Self.hex(HashFunction.sha256.hash(Self.body.prefix(1 << 20))))
            try FileManager.default.removeItem(atPath: placed)
        }
    }

    @Test func aMismatchDeletesThePartialFileAndMovesNothing() throws {
        let folder = try TempDirectory(prefix: "download-digest")
        defer { folder.remove() }
        let wrong = Checksum(algorithm: .md5, hex: String(repeating: "0", count: 32))
        let file = try DownloadFile(target: target(folder, checksum: wrong))
        write(file, Self.body.prefix(1 << 20), chunk: 512 << 10)
        do {
            let location = try file.finish(suggestedFilename: nil).path
            Issue.record("a wrong checksum moved the file to \(location)")
        } catch {
            let expected = Self.hex(HashFunction.md5.hash(Self.body.prefix(1 << 20)))
            #expect(error.code == URLErrorCode.badServerResponse.rawValue)
            #expect(error.message.hasPrefix("checksum mismatch: expected md5=\(wrong.hex) (the task's checksum) got md5=\(expected)"), "\(error.message)")
        }
        #expect(!FileManager.default.fileExists(atPath: folder.path + "/partial/1.part"))
        #expect(!FileManager.default.fileExists(atPath: folder.path + "/downloads/out.bin"))
    }

    /// A server digest whose algorithm nothing else computes is added before the body.
    @Test func aServerDigestOfAnotherAlgorithmIsComputedToo() throws {
        let folder = try TempDirectory(prefix: "download-digest")
        defer { folder.remove() }
        let data = Self.body.prefix(100_000)
        let sha384 = HashFunction.sha384.hash(data)
        let file = try DownloadFile(target: target(folder))
        file.expectDigest(announcedBy: ResponseInfo(statusCode: 200, headers: ["Repr-Digest": "sha-384=:\(Data(sha384).base64EncodedString()):"], url: "http://x/"), method: "GET")
        write(file, data, chunk: 4096)
        _ = try file.finish(suggestedFilename: nil)
        #expect(file.finalDigest?[.sha384] == Self.hex(sha384))
    }
}

/// Parsing what clients and servers write.
@Suite struct ChecksumParsingTests {
    @Test(arguments: [
        ("sha-256=" + String(repeating: "A", count: 64), DigestAlgorithm.sha256),
        ("MD5=" + String(repeating: "0", count: 32), .md5),
        ("Sha-1=" + String(repeating: "f", count: 40), .sha1),
        ("sha-384=" + String(repeating: "1", count: 96), .sha384),
        ("sha-512=" + String(repeating: "e", count: 128), .sha512),
    ])
    func accepted(_ text: String, _ algorithm: DigestAlgorithm) throws {
        let checksum = try Checksum(parsing: text, field: "checksum")
        #expect(checksum.algorithm == algorithm)
        #expect(checksum.hex == checksum.hex.lowercased())
        #expect(checksum.description == algorithm.rawValue + "=" + text.split(separator: "=")[1].lowercased())
    }

    @Test(arguments: ["", "sha-256", "sha-256=", "sha256=" + String(repeating: "a", count: 64), "sha-224=" + String(repeating: "a", count: 56),
                      "sha-256=" + String(repeating: "a", count: 63), "sha-256=" + String(repeating: "z", count: 64), "adler32=abcd1234"])
    func refused(_ text: String) {
        #expect(throws: InputError.self) { try Checksum(parsing: text, field: "checksum") }
    }

    /// The stored form (the task JSON writer's) decodes back to the same checksum and digest.
    @Test func aTasksChecksumAndDigestSurviveTheStoredForm() throws {
        var task = try JSONCoding.decoder.decode(TransferTask.self, from: Data(#"""
            {"id": 7, "sessionId": "s", "kind": "download", "state": "completed", "phase": "done", "priority": 0.5,
             "originalRequest": {"url": "http://x/", "method": "GET", "headers": {}, "bodyLength": null, "cachePolicy": "useProtocolCachePolicy",
                                 "timeoutInterval": 60, "networkServiceType": "default", "httpShouldHandleCookies": true, "mainDocumentURL": null},
             "progress": {"bytesReceived": 0, "bytesSent": 0, "bytesPerSecond": 0}, "createdAt": "2026-11-26T00:00:00Z", "version": 3}
            """#.utf8))
        #expect(task.checksum == nil && task.digest == nil, "a row stored before checksums")
        task.checksum = try Checksum(parsing: "SHA-1=" + String(repeating: "C", count: 40), field: "checksum")
        task.digest = TaskDigest(values: ["sha-256": String(repeating: "e", count: 64), "sha-1": String(repeating: "c", count: 40)])
        for stored in [true, false] {
            let decoded = try JSONCoding.decoder.decode(TransferTask.self, from: task.jsonData(stored: stored))
            #expect(decoded.checksum == task.checksum)
            #expect(decoded.digest == task.digest)
        }
        let served = try #require(try JSONSerialization.jsonObject(with: task.jsonData()) as? [String: Any])
        #expect(served["checksum"] as? String == "sha-1=" + String(repeating: "c", count: 40))
        #expect((served["digest"] as? [String: String])?["sha-1"] == String(repeating: "c", count: 40))
    }

    @Test func serverHeadersByStatusAndEncoding() {
        let digest = Data(repeating: 7, count: 32).base64EncodedString()
        let hex = String(repeating: "07", count: 32)
        func announced(_ status: Int, _ headers: [String: String], method: String = "GET") -> AnnouncedChecksum? {
            Checksum.announced(by: ResponseInfo(statusCode: status, headers: headers, url: "http://x/"), method: method)
        }
        #expect(announced(200, ["repr-digest": "sha-256=:\(digest):"])?.checksum.hex == hex)
        #expect(announced(200, ["Content-Digest": "sha-256=:\(digest):;p=1"])?.header == "Content-Digest")
        #expect(announced(200, ["Digest": "SHA-256=\(digest)"])?.checksum.algorithm == .sha256)
        #expect(announced(200, ["Digest": "SHA=\(Data(repeating: 1, count: 20).base64EncodedString())"])?.checksum.algorithm == .sha1)
        #expect(announced(206, ["Content-Digest": "sha-256=:\(digest):"]) == nil)
        #expect(announced(206, ["Digest": "SHA-256=\(digest)"]) == nil)
        #expect(announced(206, ["Repr-Digest": "sha-256=:\(digest):"])?.header == "Repr-Digest")
        #expect(announced(200, ["Repr-Digest": "sha-256=:\(digest):", "Content-Encoding": "gzip"]) == nil)
        #expect(announced(200, ["Repr-Digest": "sha-256=:\(digest):"], method: "HEAD") == nil)
        #expect(announced(404, ["Repr-Digest": "sha-256=:\(digest):"]) == nil)
        // Upper-case keys are not Structured Field keys; unknown algorithms and wrong sizes are ignored.
        #expect(announced(200, ["Repr-Digest": "SHA-256=:\(digest):, sha-512=:\(digest):, foo=:\(digest):"]) == nil)
        let sha512 = Data(repeating: 9, count: 64).base64EncodedString()
        let strongest = announced(200, ["Repr-Digest": "sha-256=:\(digest):", "Digest": "sha-512=\(sha512), md5=\(Data(count: 16).base64EncodedString())"])
        #expect(strongest?.checksum.algorithm == .sha512)
        #expect(strongest?.header == "Digest")
    }
}
