import CellCore

/// What configuring cells needs of the server: the registrations, the plugins that configure theirs,
/// and the limits on asking a plugin (a snapshot of the configuration when the cells are configured).
struct CellSources {
    /// Cell registrations, by key.
    let registrations: [String: Registration]
    /// The connected plugins, by the content type they provide.
    let plugins: PluginRegistry
    /// How long a plugin has to answer a configure request (`pluginDeadlineMilliseconds`).
    let pluginDeadlineMilliseconds: Int
    /// Unanswered requests a plugin may hold before it is unhealthy (`maxPluginPendingRequests`).
    let maximumPluginPendingRequests: Int
    /// Bytes of unanswered requests a plugin may hold before it is unhealthy (`maxOutputBytesHard`).
    let maximumOutputBytesHard: Int
}
