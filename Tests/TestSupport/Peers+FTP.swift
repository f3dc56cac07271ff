public import Foundation

/// The FTP, FTPS and SFTP servers `scripts/lib/peers-ftp.sh` starts on 127.0.0.1 (pyftpdlib and
/// asyncssh), all serving one folder as one user.
extension Peers {
    /// The four servers, each with the environment variable of its base URL.
    public enum FileServer: String, Sendable, CaseIterable, CustomStringConvertible {
        /// Plain FTP: `ftp://127.0.0.1:PORT`.
        case ftp = "TRANSFERD_TEST_FTP"
        /// FTPS that requires AUTH TLS before login: `ftp://127.0.0.1:PORT` (a session needs `ftpRequiresTLS`).
        case ftpsExplicit = "TRANSFERD_TEST_FTPS_EXPLICIT"
        /// Implicit FTPS: `ftps://127.0.0.1:PORT`.
        case ftps = "TRANSFERD_TEST_FTPS"
        /// SFTP (SSH): `sftp://127.0.0.1:PORT`; its host key is in ``sftpKnownHostsFile()``.
        case sftp = "TRANSFERD_TEST_SFTP"

        public var description: String {
            switch self {
            case .ftp: "ftp"
            case .ftpsExplicit: "ftps-explicit"
            case .ftps: "ftps-implicit"
            case .sftp: "sftp"
            }
        }

        /// The protection space protocol of its credentials ("ftp", "ftps", "sftp").
        public var spaceProtocol: String {
            switch self {
            case .ftp, .ftpsExplicit: "ftp"
            case .ftps: "ftps"
            case .sftp: "sftp"
            }
        }

        /// Whether its connections are TLS (the session then needs the FTPS test CA).
        public var usesTLS: Bool { self == .ftpsExplicit || self == .ftps }
    }

    /// A server's base URL, e.g. `sftp://127.0.0.1:PORT` (no user in it).
    public static func fileServer(_ server: FileServer) throws -> String {
        try baseURL(of: "\(server)", variable: server.rawValue)
    }

    /// The folder every file server serves (uploads land here): hello.txt, 1MiB.bin, 16MiB.bin.
    public static func fileServerRoot() throws -> URL {
        URL(fileURLWithPath: try value(of: "ftp", variable: "TRANSFERD_TEST_FTP_ROOT"), isDirectory: true)
    }

    /// The one user of the file servers and its password.
    public static func fileServerLogin() throws -> (user: String, password: String) {
        (try value(of: "ftp", variable: "TRANSFERD_TEST_FTP_USER"), try value(of: "ftp", variable: "TRANSFERD_TEST_FTP_PASSWORD"))
    }

    /// The CA (PEM) of the FTPS servers' certificate, for a session's `tlsCABundle`.
    public static func ftpsCertificateAuthorityPEM() throws -> String {
        try String(contentsOfFile: try value(of: "ftps", variable: "TRANSFERD_TEST_FTPS_CA"), encoding: .utf8)
    }

    /// An OpenSSH known_hosts file holding the SFTP server's host key.
    public static func sftpKnownHostsFile() throws -> String { try value(of: "sftp", variable: "TRANSFERD_TEST_SFTP_KNOWN_HOSTS") }

    /// A known_hosts file that names another key for the SFTP server's address (a replaced server).
    public static func sftpOtherKnownHostsFile() throws -> String { try value(of: "sftp", variable: "TRANSFERD_TEST_SFTP_OTHER_KNOWN_HOSTS") }
}
