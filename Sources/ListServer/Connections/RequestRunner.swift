import ListWire

/// What runs the request lines a connection frames: the command router, which sits above the
/// connections (they know it only by this, so that nothing here depends on the commands).
protocol RequestRunner: Sendable {
    /// Runs one request line for `connection` and returns what to reply and publish.
    func handle(line: UnsafeRawBufferPointer, connection: ConnectionHandler) -> CommandResult
}
