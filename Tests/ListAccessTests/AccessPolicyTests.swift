import ListAccess
import Testing

@Suite("Glob patterns for data source names")
struct GlobPatternTests {
    @Test func literalStarAndQuestionMark() {
        #expect(GlobPattern("tasks").matches("tasks"))
        #expect(!GlobPattern("tasks").matches("tasks-1"))
        #expect(GlobPattern("tasks-*").matches("tasks-"))
        #expect(GlobPattern("tasks-*").matches("tasks-board"))
        #expect(!GlobPattern("tasks-*").matches("task-board"))
        #expect(GlobPattern("*-board").matches("tasks-board"))
        #expect(GlobPattern("t?sks").matches("tasks"))
        #expect(!GlobPattern("t?sks").matches("tsks"))
        #expect(GlobPattern("*").matches(""))
        #expect(GlobPattern("a*b*c").matches("a-b-b-c"))
        #expect(!GlobPattern("a*b*c").matches("a-b-b-d"))
        #expect(GlobPattern("두통*").matches("두통 일지"))
    }

    @Test func escapes() {
        #expect(GlobPattern(#"a\*"#).matches("a*"))
        #expect(!GlobPattern(#"a\*"#).matches("ab"))
        #expect(GlobPattern(#"a\?"#).matches("a?"))
        #expect(GlobPattern(#"trailing\"#).matches(#"trailing\"#))
    }

    @Test func manyStarsStayFast() {
        // A pattern that makes a naive backtracking matcher exponential.
        let pattern = GlobPattern(String(repeating: "a*", count: 40) + "b")
        #expect(!pattern.matches(String(repeating: "a", count: 5_000)))
    }
}

@Suite("The access policy")
struct AccessPolicyTests {
    let root = PeerIdentity(uid: 0, gid: 0, pid: 1, user: "root")
    let service = PeerIdentity(uid: 990, gid: 990, pid: 2, user: "listd")
    let alice = PeerIdentity(uid: 1000, gid: 1000, pid: 3, groups: [1000, 2000], user: "alice")
    let bob = PeerIdentity(uid: 1001, gid: 1001, pid: 4, groups: [1001], user: "bob")

    @Test func administratorsAndOwnersMayDoAnything() {
        let policy = AccessPolicy(serviceUser: 990)
        #expect(policy.access(of: root, toDataSource: "x", ownedBy: 1000) == (.admin, .administrator))
        #expect(policy.access(of: service, toDataSource: "x", ownedBy: 1000) == (.admin, .administrator))
        #expect(policy.access(of: alice, toDataSource: "x", ownedBy: 1000) == (.admin, .owner))
        #expect(policy.access(of: bob, toDataSource: "x", ownedBy: 1000) == (.read, .defaultLevel))
        #expect(policy.mayChangeRegistration(alice, ownedBy: 1000))
        #expect(!policy.mayChangeRegistration(bob, ownedBy: 1000))
        #expect(policy.mayChangeRegistration(root, ownedBy: 1000))
    }

    @Test func theFirstMatchingRuleDecides() {
        var policy = AccessPolicy(serviceUser: 990)
        policy.rules = [
            AccessRule(dataSources: GlobPattern("tasks-private"), everyone: true, level: .none),
            AccessRule(dataSources: GlobPattern("tasks-*"), groups: [2000], level: .write),
            AccessRule(dataSources: GlobPattern("tasks-*"), users: [1001], level: .admin),
        ]
        #expect(policy.access(of: alice, toDataSource: "tasks-board", ownedBy: 0) == (.write, .rule(1)))
        #expect(policy.access(of: bob, toDataSource: "tasks-board", ownedBy: 0) == (.admin, .rule(2)))
        #expect(policy.access(of: bob, toDataSource: "tasks-private", ownedBy: 0) == (.none, .rule(0)))
        #expect(policy.access(of: bob, toDataSource: "other", ownedBy: 0) == (.read, .defaultLevel))
        // The owner is not restricted by rules; administrators neither.
        #expect(policy.access(of: alice, toDataSource: "tasks-private", ownedBy: 1000) == (.admin, .owner))
        #expect(policy.access(of: root, toDataSource: "tasks-private", ownedBy: 1000).level == .admin)
        policy.defaultLevel = .none
        #expect(policy.access(of: bob, toDataSource: "other", ownedBy: 0) == (.none, .defaultLevel))
    }

    @Test func aRuleOnANameAlsoGovernsCreatingIt() {
        var policy = AccessPolicy(serviceUser: 990)
        policy.rules = [
            AccessRule(dataSources: GlobPattern("shared-*"), groups: [2000], level: .write),
            AccessRule(dataSources: GlobPattern("shared-*"), everyone: true, level: .read),
        ]
        #expect(policy.mayCreate(alice, dataSource: "shared-1").allowed)
        #expect(policy.mayCreate(bob, dataSource: "shared-1") == (false, .rule(1)))
        #expect(policy.mayCreate(bob, dataSource: "mine").allowed)
        #expect(policy.mayCreate(root, dataSource: "shared-1").allowed)
        // A name covered only by rules for others cannot be taken first by someone they do not name.
        policy.rules = [AccessRule(dataSources: GlobPattern("tasks-*"), groups: [2000], level: .write)]
        #expect(policy.mayCreate(alice, dataSource: "tasks-board").allowed)
        #expect(policy.mayCreate(bob, dataSource: "tasks-board") == (false, .rule(0)))
        #expect(policy.mayCreate(bob, dataSource: "other").allowed)
    }

    @Test func onlyTrustedUsersProvidePlugins() {
        var policy = AccessPolicy(serviceUser: 990, trustedPluginUsers: [1001])
        #expect(policy.mayProvidePlugins(root))
        #expect(policy.mayProvidePlugins(service))
        #expect(policy.mayProvidePlugins(bob))
        #expect(!policy.mayProvidePlugins(alice))
        policy.trustedPluginGroups = [2000]
        #expect(policy.mayProvidePlugins(alice))
    }

    @Test func levelsAreOrderedAndNamed() {
        #expect(AccessLevel.none < .read && AccessLevel.read < .write && AccessLevel.write < .admin)
        #expect(AccessLevel.allCases.map(\.description) == ["none", "read", "write", "admin"])
        #expect(AccessLevel(name: "write") == .write)
        #expect(AccessLevel(name: "owner") == nil)
    }
}
