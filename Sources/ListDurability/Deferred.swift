/// A value that arrives later, on the event loop (no threads involved: everything is loop-confined).
/// The command path's one future type: a command's deferred result, a change's durability, a
/// follower's catch-up. (Work done on another thread, the writer's or a thread pool's, comes back as
/// SwiftNIO's `EventLoopFuture`, which hops to the loop.)
package final class Deferred<Value> {
    package init() {}

    private var value: Value?
    private var handler: ((Value) -> Void)?

    package func resolve(_ value: Value) {
        if let handler {
            self.handler = nil
            handler(value)
        } else {
            self.value = value
        }
    }

    package func whenResolved(_ body: @escaping (Value) -> Void) {
        if let value {
            body(value)
        } else {
            handler = body
        }
    }

    package func map<Other>(_ transform: @escaping (Value) -> Other) -> Deferred<Other> {
        let mapped = Deferred<Other>()
        whenResolved { mapped.resolve(transform($0)) }
        return mapped
    }
}
