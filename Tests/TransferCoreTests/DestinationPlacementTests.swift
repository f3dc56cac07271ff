import Foundation
import Synchronization
import Testing
import TestSupport
@testable import TransferModel
@testable import TransferStore
@testable import TransferEngine
@testable import TransferService

/// Putting a finished download at its destination without replacing what is there (issue 16,
/// item 3): one atomic step, so threads racing for one name never both get it, and the names
/// `rename` tries.
@Suite struct DestinationPlacementTests {
    @Test func renamedFormsPutTheNumberBeforeTheLastExtension() {
        func names(_ path: String) -> [String] { Array(ConflictNames(path).prefix(3)) }
        #expect(names("/r/a.tar.gz") == ["/r/a.tar.gz", "/r/a.tar (1).gz", "/r/a.tar (2).gz"])
        #expect(names("/r/d.x/file") == ["/r/d.x/file", "/r/d.x/file (1)", "/r/d.x/file (2)"])
        #expect(names("/r/.profile") == ["/r/.profile", "/r/.profile (1)", "/r/.profile (2)"])
        #expect(Array(ConflictNames("/r/f.bin")).count == ConflictNames.limit + 1)
    }

    /// Many threads place their own file at one name at the same moment, round after round:
    /// exactly one succeeds each round, and the name holds the winner's bytes.
    @Test func racersForOneNameNeverBothWin() throws {
        let folder = try TempDirectory(prefix: "placement")
        defer { folder.remove() }
        let racers = 8
        for round in 0..<50 {
            let destination = folder.path + "/round-\(round).bin"
            for racer in 0..<racers {
                try Data("racer \(racer)".utf8).write(to: URL(fileURLWithPath: folder.path + "/source-\(round)-\(racer)"))
            }
            let winners = Mutex<[Int]>([])
            let ready = Mutex(0)
            let threads = (0..<racers).map { racer in
                Thread {
                    ready.withLock { $0 += 1 }
                    while ready.withLock({ $0 }) < racers {}  // start together
                    if (try? FileSystem.placeWithoutReplacing(folder.path + "/source-\(round)-\(racer)", at: destination)) == true {
                        winners.withLock { $0.append(racer) }
                    }
                }
            }
            threads.forEach { $0.start() }
            while threads.contains(where: { !$0.isFinished }) { usleep(100) }
            let won = winners.withLock { $0 }
            try #require(won.count == 1, "round \(round): \(won.count) racers placed their file")
            #expect(FileManager.default.contents(atPath: destination) == Data("racer \(won[0])".utf8))
            // The losers' files stay where they were: nothing is lost.
            #expect((0..<racers).filter { FileManager.default.fileExists(atPath: folder.path + "/source-\(round)-\($0)") }.count == racers - 1)
        }
    }

    /// Downloads with policy `rename` finishing at once from several threads each get a name
    /// of their own.
    @Test func renamingDownloadsFinishingTogetherGetDistinctNames() throws {
        let folder = try TempDirectory(prefix: "placement")
        defer { folder.remove() }
        try FileManager.default.createDirectory(atPath: folder.path + "/root", withIntermediateDirectories: true)
        let count = 6
        let files = try (0..<count).map { index in
            let file = try DownloadFile(target: DownloadTarget(
                partialPath: folder.path + "/partial/\(index).part", destinationPath: folder.path + "/root/same.bin",
                defaultDirectory: folder.path + "/files/\(index)", root: folder.path + "/root", conflict: .rename))
            _ = file.write(Data("download \(index)".utf8).bytes)
            return file
        }
        let placed = Mutex<[Int: String]>([:])
        nonisolated(unsafe) let unsafeFiles = files  // each thread finishes only its own file
        let threads = (0..<count).map { index in
            Thread {
                if let path = try? unsafeFiles[index].finish(suggestedFilename: nil).path { placed.withLock { $0[index] = path } }
            }
        }
        threads.forEach { $0.start() }
        while threads.contains(where: { !$0.isFinished }) { usleep(100) }
        let paths = placed.withLock { $0 }
        #expect(Set(paths.values).count == count, "\(paths)")
        for (index, path) in paths {
            #expect(FileManager.default.contents(atPath: path) == Data("download \(index)".utf8))
        }
        #expect(names(in: folder.path + "/root") == ["same (1).bin", "same (2).bin", "same (3).bin", "same (4).bin", "same (5).bin", "same.bin"])
    }

    private func names(in path: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted()
    }

    /// Whatever holds the name, a file, a folder or a symlink leading nowhere, is left as it is
    /// and the source stays; a free name takes the source (renameat2 with RENAME_NOREPLACE,
    /// or link(2) where the file system has no such rename).
    @Test func aTakenNameOfAnyKindIsNeverReplaced() throws {
        let folder = try TempDirectory(prefix: "placement")
        defer { folder.remove() }
        let source = folder.path + "/source"
        try Data("new".utf8).write(to: URL(fileURLWithPath: source))
        try Data("old".utf8).write(to: URL(fileURLWithPath: folder.path + "/file"))
        try FileManager.default.createDirectory(atPath: folder.path + "/folder", withIntermediateDirectories: false)
        symlink(folder.path + "/nowhere", folder.path + "/dangling")
        for taken in ["file", "folder", "dangling"] {
            #expect(try !FileSystem.placeWithoutReplacing(source, at: folder.path + "/" + taken), "\(taken)")
            #expect(FileManager.default.fileExists(atPath: source), "\(taken)")
        }
        #expect(try String(contentsOfFile: folder.path + "/file", encoding: .utf8) == "old")
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: folder.path + "/dangling")) == folder.path + "/nowhere")
        #expect(try FileSystem.placeWithoutReplacing(source, at: folder.path + "/free"))
        #expect(!FileManager.default.fileExists(atPath: source))
        #expect(try String(contentsOfFile: folder.path + "/free", encoding: .utf8) == "new")
    }
}
