// swift-tools-version: 6.1
import PackageDescription

// Strict settings shared by every Swift target (see shared/STYLE.md).
let strict: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

// The commit the binaries say they were built from (BuildInfo): given by the build (the image
// and the .deb have no .git), else read from this checkout.
let buildCommit = Context.environment["TRANSFERD_BUILD_COMMIT"].flatMap { $0.isEmpty ? nil : $0 }
    ?? Context.gitInformation?.currentCommit ?? "unknown"

let package = Package(
    name: "transferd",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "transferd", targets: ["transferd"]),
        .executable(name: "transferctl", targets: ["transferctl"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        // 1.16.2: LogHandler.log(event:), which LogfmtLogHandler implements.
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        // UnixSignals only: SIGTERM and SIGINT as an async sequence. (Its ServiceLifecycle brings
        // swift-async-algorithms and four modules of swift-collections, built anew on every new
        // machine, for one service that a loop over the signals runs as well.)
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.6.0"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.6.0"),
        // GET /metrics: counters, gauges and histograms in a registry the daemon owns, rendered
        // in Prometheus' text format (brings swift-metrics' CoreMetrics and swift-atomics).
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
    ],
    targets: [
        // C libraries: one system-library target each, shims only for variadic calls.
        .systemLibrary(name: "CCurl", pkgConfig: "libcurl", providers: [.apt(["libcurl4-openssl-dev", "libssl-dev"])]),
        .systemLibrary(name: "CMicroHTTPD", pkgConfig: "libmicrohttpd", providers: [.apt(["libmicrohttpd-dev"])]),
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        // gzip and deflate response bodies: decoded by transferd, not libcurl, to know they ended.
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        // OpenSSL's libcrypto: hashes, HMAC, ChaCha20-Poly1305, random keys. libcurl links it
        // already; swift-crypto brought a second copy (BoringSSL, 359 C files) that every new
        // machine built twice, for the tests and for the release image.
        .systemLibrary(name: "CLibCrypto", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
        // PostgreSQL's client library, for the cluster's shared store (issue 19).
        .systemLibrary(name: "CLibPQ", pkgConfig: "libpq", providers: [.apt(["libpq-dev"])]),

        // Thin Swift layers: each is the only importer of its C module.
        .target(name: "Curl", dependencies: ["CCurl"], swiftSettings: strict),
        .target(name: "HTTPServer", dependencies: ["CMicroHTTPD"], swiftSettings: strict),
        .target(name: "SQLite", dependencies: ["CSQLite"], swiftSettings: strict),
        .target(name: "Zlib", dependencies: ["CZlib"], swiftSettings: strict),
        .target(name: "PostgreSQL", dependencies: ["CLibPQ"], swiftSettings: strict),
        .target(name: "LibCrypto", dependencies: ["CLibCrypto"], swiftSettings: strict),
        // The store on PostgreSQL (`--database-url`, issue 19, docs/cluster.md): the TaskStore
        // for one daemon today, and the cluster's schema, queue and leases.
        .target(
            name: "ClusterStore",
            dependencies: ["PostgreSQL", "TransferStore", "TransferModel", .product(name: "Logging", package: "swift-log")],
            swiftSettings: strict
        ),

        // Version and git commit, for both binaries and /metrics. The commit reaches code as a
        // C string macro: the manifest's one way to pass a computed value in.
        .target(
            name: "CBuildInfo",
            cSettings: [.define("TRANSFERD_BUILD_COMMIT", to: "\"\(buildCommit.filter { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "." })\"")]
        ),
        .target(name: "BuildInfo", dependencies: ["CBuildInfo"], swiftSettings: strict),

        // Any JSON value: one type for the daemon and the command-line client.
        .target(name: "JSONModel", swiftSettings: strict),

        // The domain, in four layers whose dependencies point one way (ARCHITECTURE.md):
        // values <- store, engine <- service. The compiler rejects every upward reference.
        // Values, JSON and validation: tasks, sessions, cookies, credentials, errors; the few
        // POSIX file helpers validation needs. No threads, no database, no network.
        .target(
            name: "TransferModel",
            dependencies: ["JSONModel"],
            swiftSettings: strict
        ),
        // Durable state: the task store (SQLite, WAL) and the blob files.
        .target(
            name: "TransferStore",
            dependencies: [
                "TransferModel", "SQLite",
                .product(name: "Logging", package: "swift-log"),
                // SHA-256 of blobs, computed while they stream to disk (BlobWriter).
                "LibCrypto",
            ],
            swiftSettings: strict
        ),
        // libcurl transfers on the engine thread: commands in (EngineCommand), updates out
        // (TransferUpdate). Knows nothing of the store or the service.
        .target(
            name: "TransferEngine",
            dependencies: [
                "TransferModel", "Curl", "Zlib",
                "LibCrypto",
            ],
            swiftSettings: strict
        ),
        // Sessions, the scheduler, tasks' lives, long-polls, caches, cookies, credentials,
        // webhooks and metrics, over the store and the engine.
        .target(
            name: "TransferService",
            dependencies: [
                "TransferModel", "TransferStore", "TransferEngine", "Curl", "JSONModel", "BuildInfo",
                .product(name: "Logging", package: "swift-log"),
                "LibCrypto",
                // Heaps: the scheduler's queues (O(log n) admission with 100,000 tasks queued)
                // and timed holds (retry backoff, waiting for connectivity, earliestBeginDate).
                .product(name: "HeapModule", package: "swift-collections"),
                // The domain's instruments (TransferService/Metrics).
                .product(name: "Prometheus", package: "swift-prometheus"),
            ],
            swiftSettings: strict
        ),
        // The REST/JSON API over the domain.
        .target(
            name: "TransferAPI",
            dependencies: [
                "TransferModel", "TransferStore", "TransferService", "HTTPServer", "JSONModel",
                .product(name: "Logging", package: "swift-log"),
                "LibCrypto",
                // HTTP request latency by route, and rendering GET /metrics.
                .product(name: "Prometheus", package: "swift-prometheus"),
            ],
            // openapi.yaml is a symlink to the top-level contract, embedded so GET /openapi.yaml needs no file;
            // the dashboard's files likewise, served as written (no build step).
            resources: [
                .embedInCode("Resources/openapi.yaml"),
                .embedInCode("Resources/dashboard/index.html"),
                .embedInCode("Resources/dashboard/app.css"),
                .embedInCode("Resources/dashboard/app.js"),
                .embedInCode("Resources/dashboard/api.js"),
                .embedInCode("Resources/dashboard/format.js"),
                .embedInCode("Resources/dashboard/view.js"),
                .embedInCode("Resources/dashboard/states.js"),
                .embedInCode("Resources/dashboard/tasklist.js"),
                .embedInCode("Resources/dashboard/overview.js"),
                .embedInCode("Resources/dashboard/detail.js"),
                .embedInCode("Resources/dashboard/add.js"),
            ],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "transferd",
            dependencies: [
                "TransferAPI", "TransferModel", "TransferService", "ClusterStore", "BuildInfo", "JSONModel",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict
        ),
        // The command-line client: speaks only the public HTTP API (through the Curl layer, no
        // Foundation networking), never the Transfer* domain targets or TransferAPI.
        .executableTarget(
            name: "transferctl",
            // LibCrypto: a daemon's file moved into place is checked against the task's SHA-256.
            dependencies: ["Curl", "JSONModel", "BuildInfo", "LibCrypto", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            swiftSettings: strict
        ),

        // Test support: an in-process origin server for fault injection, peers, a client.
        .target(
            name: "TestSupport",
            // LibCrypto: StreamingOrigin hashes the bodies it receives (1 GiB uploads, never held).
            dependencies: ["LibCrypto"],
            path: "Tests/TestSupport",
            swiftSettings: strict
        ),
        .testTarget(name: "HTTPServerTests", dependencies: ["HTTPServer", "TestSupport"], swiftSettings: strict),
        .testTarget(name: "PostgreSQLTests", dependencies: ["PostgreSQL", "ClusterStore", "TransferStore", "TransferModel", "JSONModel", "TestSupport", .product(name: "Logging", package: "swift-log")], swiftSettings: strict),
        .testTarget(name: "TransferCoreTests", dependencies: ["TransferModel", "TransferStore", "TransferEngine", "TransferService", "JSONModel", "SQLite", "Curl", "Zlib", "PostgreSQL", "ClusterStore", "LibCrypto", "TestSupport", .product(name: "Logging", package: "swift-log")], swiftSettings: strict),
        .testTarget(name: "TransferctlTests", dependencies: ["transferctl", "JSONModel", .product(name: "ArgumentParser", package: "swift-argument-parser")], swiftSettings: strict),
        .testTarget(name: "TransferAPITests", dependencies: ["TransferAPI", "TransferModel", "TransferService", "HTTPServer", "TestSupport", "BuildInfo", "LibCrypto"], swiftSettings: strict),
    ]
)
