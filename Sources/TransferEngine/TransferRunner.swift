/// What the service needs of a transfer engine: commands in (`EngineCommand`), updates out (to
/// the `TransferObserver` given at `start`). `CurlEngine` is the real one; the service's tests
/// run on a fake that records the commands and reports the updates a test chooses, with no
/// sockets (Tests/TransferCoreTests/Support/FakeEngine.swift).
///
/// The contract the service relies on, kept by both: `submit` never blocks and may be called
/// before `start` (the commands wait for it); updates of one task come in order, on a thread
/// that holds none of the service's locks, and only for a task the engine was started with
/// (`.start`) and has not yet ended (`.completed`, `.detached`).
package protocol TransferRunner: Sendable {
    /// Starts reporting to `observer` until `stop`. Called once.
    func start(observer: any TransferObserver)
    /// Whether the engine runs (started, not stopped).
    var isRunning: Bool { get }
    /// Posts a command; never blocks.
    func submit(_ command: EngineCommand)
    /// Stops the engine, waiting up to `timeout` seconds; returns whether it stopped.
    @discardableResult
    func stop(timeout: Double) -> Bool
}

extension CurlEngine: TransferRunner {}
