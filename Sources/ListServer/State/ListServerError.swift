/// A failure to start the server, with a message for the log.
public struct ListServerError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
