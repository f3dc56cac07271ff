import Foundation
import TestSupport
import Testing
@testable import TransferModel

/// `FileSystem.resolved` and `isInside`: the checks that keep a download inside its root.
@Suite struct FileSystemResolveTests {
    @Test func resolvesSymlinksAtEveryLevelAsRealpathDoes() throws {
        let folder = try TempDirectory()
        defer { folder.remove() }
        let root = try #require(realpathString(folder.path))
        try FileManager.default.createDirectory(atPath: root + "/a/b", withIntermediateDirectories: true)
        #expect(FileManager.default.createFile(atPath: root + "/a/b/file", contents: Data("x".utf8)))
        symlink(root + "/a", root + "/link")  // a folder link
        symlink("b/file", root + "/a/rel")  // a relative file link
        for path in ["/a/b/file", "/link/b/file", "/link/rel", "/a/./b/../b/file", "/link/b/", "/"] {
            #expect(FileSystem.resolved(root + path) == realpathString(root + path), "\(path)")
        }
        #expect(FileSystem.resolved(root + "/link/rel") == root + "/a/b/file")
        #expect(FileSystem.resolved(root + "/missing") == nil)
        #expect(FileSystem.resolved(root + "/a/b/file/below") == nil)
        // A folder whose name looks like what /proc says of a deleted one is still itself.
        try FileManager.default.createDirectory(atPath: root + "/x (deleted)", withIntermediateDirectories: true)
        #expect(FileSystem.resolved(root + "/x (deleted)") == root + "/x (deleted)")
    }

    @Test func isInsideFollowsLinksAndJudgesMissingPathsByTheirAncestor() throws {
        let folder = try TempDirectory()
        defer { folder.remove() }
        let base = try #require(realpathString(folder.path))
        try FileManager.default.createDirectory(atPath: base + "/root/in", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: base + "/outside", withIntermediateDirectories: true)
        symlink(base + "/outside", base + "/root/escape")
        symlink(base + "/root/in", base + "/root/alias")
        #expect(FileSystem.isInside(base + "/root/in", root: base + "/root"))
        #expect(FileSystem.isInside(base + "/root/in/not/yet", root: base + "/root"))
        #expect(FileSystem.isInside(base + "/root/alias/new", root: base + "/root"))
        #expect(!FileSystem.isInside(base + "/root/escape", root: base + "/root"))
        #expect(!FileSystem.isInside(base + "/root/escape/new/deeper", root: base + "/root"))
        #expect(!FileSystem.isInside(base + "/rootless", root: base + "/root"))  // a prefix is not inside
    }

    private func realpathString(_ path: String) -> String? {
        guard let pointer = realpath(path, nil) else { return nil }
        defer { free(pointer) }
        return String(cString: pointer)
    }

    /// A batch's destinations share their folders' checks (`RootedPath.CheckedFolders`): each
    /// folder is judged once, with the same answer as alone, and a link leading out is refused
    /// for every destination under it, not only the first.
    @Test func aBatchJudgesEachFolderOnceWithTheSameAnswers() throws {
        let folder = try TempDirectory()
        defer { folder.remove() }
        let base = try #require(realpathString(folder.path))
        let root = base + "/root"
        try FileManager.default.createDirectory(atPath: base + "/outside", withIntermediateDirectories: true)
        var folders = RootedPath.CheckedFolders()
        try folders.make(root)
        try folders.make(root)  // made once; a second call is no error
        symlink(base + "/outside", root + "/escape")
        func resolve(_ relative: String) throws -> String {
            try RootedPath.resolve(relative, root: root, field: "destination", code: "invalid_destination", checked: &folders)
        }
        #expect(try resolve("in/a") == root + "/in/a")
        #expect(try resolve("in/b") == root + "/in/b")
        for relative in ["escape/a", "escape/b", "escape/deeper/c"] {
            #expect(throws: InputError.self, "\(relative)") { try resolve(relative) }
            #expect(throws: InputError.self, "\(relative) alone") {
                try RootedPath.resolve(relative, root: root, field: "destination", code: "invalid_destination")
            }
        }
    }

    /// `RootedPath.resolve` reads a path's bytes once; held here to the rules it had as a split
    /// into components (refusals and the path made) over paths built from the pieces where the
    /// two could differ: dots, empty components, control characters, multi-byte characters.
    @Test func resolvingAgreesWithTheComponentRulesOverEveryShape() throws {
        let folder = try TempDirectory()
        defer { folder.remove() }
        let root = try #require(realpathString(folder.path))
        let pieces = ["a", ".", "..", "", "...", ".a", "a.", "..a", "é", "a\u{1}b", "\u{7f}", "b c", "\u{1F600}"]
        var paths: [String] = []
        for first in pieces {
            for second in pieces {
                for third in ["", "f", ".", "..", "é"] {
                    for lead in ["", "/"] {
                        for trail in ["", "/"] {
                            paths.append(lead + [first, second, third].joined(separator: "/") + trail)
                            paths.append(lead + first + "//" + second + trail)
                        }
                    }
                }
            }
        }
        var resolved = 0
        for relative in paths {
            let expected = Self.componentRules(relative, root: root)
            let actual: String?
            do { actual = try RootedPath.resolve(relative, root: root, field: "destination", code: "invalid_destination") } catch { actual = nil }
            #expect(actual == expected, "\(relative.debugDescription)")
            if actual != nil { resolved += 1 }
        }
        #expect(resolved > 100)  // both outcomes are exercised
        #expect(resolved < paths.count / 2)
        // A "/" that a grapheme cluster takes in still separates components for the file system:
        // the ".." after it is refused (a split into Characters saw one component "\u{600}/..").
        for hidden in ["\u{600}/../x", "a/\u{600}/../x", "a/..\u{301}/../x"] {
            #expect(throws: InputError.self, "\(hidden.debugDescription)") {
                try RootedPath.resolve(hidden, root: root, field: "destination", code: "invalid_destination")
            }
        }
        // Empty components are dropped on the byte too.
        #expect(try RootedPath.resolve("a//\u{600}/b", root: root, field: "destination", code: "invalid_destination") == root + "/a/\u{600}/b")
    }

    /// The rules as they were written before the byte scan, for the paths that stay inside root.
    private static func componentRules(_ relative: String, root: String) -> String? {
        guard !relative.isEmpty, relative.utf8.count <= 1024, !relative.hasPrefix("/"), !relative.hasSuffix("/"),
              !relative.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7f }) else { return nil }
        let components = relative.split(separator: "/", omittingEmptySubsequences: true)
        guard !components.contains(where: { $0 == ".." || $0 == "." }) else { return nil }
        return root + "/" + components.joined(separator: "/")
    }
}
