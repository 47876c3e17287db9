import DiffableCore
import FileSafety
import ListClient
import ListWire
import NIOCore
import NIOPosix

/// Where listd is and how listweb reaches it: a connection per page (its view) and short ones for the
/// index and the metrics. Only a socket that no untrusted user could have put there is connected to
/// (the socket and the directories above it belong to trusted users, as listctl checks).
public struct ListdLink: Sendable {
    public let socketPath: String
    public let trustedOwners: Set<UInt32>?
    let group: any EventLoopGroup
    /// The longest line listd may send (its own `maxLineBytes` bounds requests; replies such as a big
    /// snapshot can be larger).
    static let maximumLineBytes = 256 << 20

    public init(socketPath: String, trustedOwners: Set<UInt32>? = SocketPath.trustedOwners(), group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton) {
        self.socketPath = socketPath
        self.trustedOwners = trustedOwners
        self.group = group
    }

    /// A new connection to listd: bytes out, and in: lines (without newline), or with `lines: false` the
    /// bytes as they come (a page's relay splits them itself, so that a burst goes out as one message).
    func connect(lines: Bool = true) async throws -> NIOAsyncChannel<ByteBuffer, ByteBuffer> {
        var path = socketPath
        if let trustedOwners {
            guard let resolved = try TrustedPath.checkSocket(path, owners: trustedOwners) else {
                throw ListdUnavailable("no socket at \(socketPath)")
            }
            path = resolved
        }
        let channel = try await ClientBootstrap(group: group).connect(unixDomainSocketPath: path) { channel in
            channel.eventLoop.makeCompletedFuture {
                if lines { try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(LineDecoder(maximumBytes: Self.maximumLineBytes))) }
                return try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
            }
        }
        return channel
    }

    /// One request on a short connection: its `result`, or listd's error.
    public func request(_ request: JSONValue) async throws -> JSONValue {
        let channel = try await connect()
        return try await channel.executeThenClose { inbound, outbound in
            var line = ByteBuffer(bytes: request.jsonBytes)
            line.writeInteger(UInt8(ascii: "\n"))
            try await outbound.write(line)
            for try await reply in inbound {
                let value = try JSONParser.parse(Array(reply.readableBytesView))
                if value["event"] != nil { continue }
                if value["ok"] == .bool(true) { return value["result"] ?? .null }
                throw ListdRefusal(code: value["error"]?["code"]?.stringValue ?? "error", message: value["error"]?["message"]?.stringValue ?? "refused")
            }
            throw ListdUnavailable("listd closed the connection")
        }
    }
}

/// listd cannot be reached.
public struct ListdUnavailable: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}

/// listd answered with an error.
public struct ListdRefusal: Error, CustomStringConvertible {
    public let code: String
    public let message: String
    public var description: String { "\(code): \(message)" }
}
