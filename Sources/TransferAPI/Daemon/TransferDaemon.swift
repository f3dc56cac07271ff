internal import HTTPServer
public import Logging
public import TransferService
internal import TransferStore

/// The whole daemon: the transfer service and the HTTP server in front of it, started and stopped
/// in dependency order. The executable runs one; API tests start one on port 0.
public final class TransferDaemon: Sendable {
    public let service: TransferService
    private let server: HTTPServer
    private let logger: Logger
    /// The host the server listens on, registered with the port (`joinCluster`).
    private let listenHost: String

    public init(configuration: DaemonConfiguration, logger: Logger = Logger(label: "transferd")) throws {
        if let refusal = configuration.refusal { throw DaemonError.refused(refusal) }
        let tokens: [AccessToken]
        do {
            let configured = try configuration.accessTokens()
            if let warning = configured.warning { logger.warning("\(warning)") }
            tokens = configured.tokens
            if !tokens.isEmpty {
                // Names and roles only: what an operator checks at start, never a secret.
                logger.info("tokens configured", metadata: [
                    "auth.tokens": "\(tokens.map { "\($0.name):\($0.role.rawValue)" }.joined(separator: ","))",
                ])
            }
        } catch {
            throw DaemonError.refused(error.description)
        }
        self.logger = logger
        // Descriptors are shared out before anything opens one (`DescriptorBudget`).
        let budget = DescriptorBudget(
            limit: FileDescriptorLimit.raiseToHardLimit(), maxConnections: configuration.maxConnections,
            maxConnectionsPerClient: configuration.maxConnectionsPerClient,
            maxTransfers: configuration.service.maxConcurrentTransfers)
        var serviceConfiguration = configuration.service
        serviceConfiguration.maxConcurrentTransfers = budget.transfers
        // Worth an operator's attention when it bites: transfers lowered, or the API's cap halved.
        if budget.transfers < configuration.service.maxConcurrentTransfers || budget.apiConnections < configuration.maxConnections / 2 {
            logger.warning("descriptor limit lowers the daemon's caps", metadata: [
                "fd.limit": "\(budget.limit)", "http.max_connections": "\(budget.apiConnections)",
                "http.max_connections_per_client": "\(budget.perClient)", "transfers.max": "\(budget.transfers)",
            ])
        }
        serviceConfiguration.networkPolicy = configuration.networkPolicy
        serviceConfiguration.tenantQuotas = configuration.tenantQuotas(withTokens: !tokens.isEmpty)
        service = try TransferService(configuration: serviceConfiguration, logger: logger)
        var http = HTTPServerConfiguration()
        http.host = configuration.listen.host == "localhost" ? "127.0.0.1" : configuration.listen.host
        listenHost = http.host
        http.port = configuration.listen.port
        http.threadCount = configuration.httpThreads
        http.maxBodySize = configuration.maxRequestBodySize
        http.connectionLimit = budget.apiConnections
        http.perClientConnectionLimit = budget.perClient
        http.idleConnectionTimeout = configuration.idleConnectionTimeout
        // The server's own 413 says body_too_large; the API's code for it is payload_too_large.
        http.errorResponse = { status, code, message in
            HTTPServerConfiguration.jsonErrorResponse(status: status, code: code == "body_too_large" ? "payload_too_large" : code, message: message)
        }
        let handler = APIHandler(
            service: service, authenticator: Authenticator(tokens: tokens),
            maxBlobSize: configuration.maxBlobSize, logger: logger)
        server = HTTPServer(configuration: http, handler: handler)
    }

    /// Starts transfers, then the HTTP server. On failure nothing is left running.
    public func start() throws {
        service.start()
        do {
            try server.start()
        } catch {
            service.stop()
            throw error
        }
        service.joinCluster(host: listenHost, port: server.port)
        logger.info("transferd listening", metadata: [
            "http.port": "\(server.port)", "store.location": "\(service.store.location)", "network.policy": "\(service.networkPolicy)",
        ])
    }

    /// The port the server is bound to (useful when 0 was asked).
    public var port: Int { server.port }

    /// Answers new requests 503, answers held long-polls, stops the server, stops transfers, checkpoints
    /// and closes the database.
    public func stop() {
        let clock = ContinuousClock()
        let polls = clock.measure { service.beginShutdown() }
        let http = clock.measure { server.stop() }
        let transfers = clock.measure { service.stop() }
        logger.info("transferd stopped", metadata: [
            "shutdown.long_polls": "\(polls)", "shutdown.http": "\(http)", "shutdown.service": "\(transfers)",
        ])
    }
}

public enum DaemonError: Error, CustomStringConvertible {
    case refused(String)
    public var description: String {
        switch self { case .refused(let reason): return reason }
    }
}
