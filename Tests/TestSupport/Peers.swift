public import Foundation

/// The real HTTP servers that `scripts/test.sh` starts on 127.0.0.1 before `swift test`, found
/// through environment variables it exports.
///
/// A missing peer is an error, not a skip: a test that needs one fails with a message that says
/// how to run the suite with its peers.
public enum Peers {
    /// httpbin (under gunicorn), e.g. `http://127.0.0.1:PORT`: `/get`, `/status/418`,
    /// `/delay/2`, `/drip`, `/redirect/3`, `/basic-auth/u/p`, ... Read from `TRANSFERD_TEST_HTTPBIN`.
    public static func httpbin() throws -> String {
        try baseURL(of: "httpbin", variable: "TRANSFERD_TEST_HTTPBIN")
    }

    /// httpbin's log file, with gunicorn's access lines (`"GET /cache?x=1 HTTP/1.1" 304 0 ...`),
    /// so a test can see what httpbin answered. Read from `TRANSFERD_TEST_HTTPBIN_LOG`.
    public static func httpbinLog() throws -> URL {
        URL(fileURLWithPath: try value(of: "httpbin", variable: "TRANSFERD_TEST_HTTPBIN_LOG"))
    }

    /// nginx serving static files, e.g. `http://127.0.0.1:PORT`, with real `Range`, `ETag` and
    /// `If-Range` handling: `/files/NAME` at full speed, `/slow/NAME` limited to 256 KiB/s, `/slower/NAME` to 64 KiB/s.
    /// The files are in ``nginxDocumentRoot()``. Read from `TRANSFERD_TEST_NGINX`.
    public static func nginx() throws -> String {
        try baseURL(of: "nginx", variable: "TRANSFERD_TEST_NGINX")
    }

    /// The folder nginx serves as `/files/` and `/slow/`, so a test can compare what it downloaded
    /// with the original. Holds `hello.txt`, `1MiB.bin` and `16MiB.bin` (random bytes).
    /// Read from `TRANSFERD_TEST_NGINX_ROOT`.
    public static func nginxDocumentRoot() throws -> URL {
        URL(fileURLWithPath: try value(of: "nginx", variable: "TRANSFERD_TEST_NGINX_ROOT"), isDirectory: true)
    }

    /// A PostgreSQL server of this run's own (initdb into a temporary folder, on 127.0.0.1), as
    /// a libpq URL with its database: `postgresql://transferd@127.0.0.1:PORT/transferd`. The user
    /// may create databases, so a suite can make one of its own. Read from `TRANSFERD_TEST_POSTGRES`.
    public static func postgres() throws -> String {
        try value(of: "postgres", variable: "TRANSFERD_TEST_POSTGRES")
    }

    static func baseURL(of peer: String, variable: String) throws -> String {
        var url = try value(of: peer, variable: variable)
        while url.hasSuffix("/") { url.removeLast() }
        return url
    }

    static func value(of peer: String, variable: String) throws -> String {
        guard let value = ProcessInfo.processInfo.environment[variable], !value.isEmpty else {
            throw PeerUnavailable(peer: peer, variable: variable)
        }
        return value
    }
}

/// A test needed a real peer server that is not running.
public struct PeerUnavailable: Error, Sendable, CustomStringConvertible {
    /// The peer's name, e.g. "httpbin".
    public let peer: String
    /// The environment variable that was not set.
    public let variable: String

    public var description: String {
        "The \(peer) peer is not running (\(variable) is not set). "
            + "Run the tests with scripts/test.sh, which starts the peers on 127.0.0.1 and sets it "
            + "(extra arguments go to swift test, e.g. bash scripts/test.sh --filter NAME)."
    }
}
