import DiffableCore
import ListWire
import Testing

@testable import ListServer

/// Random command sequences through the real command path (framer, connection handler, router, state
/// layer), each compared with `ReferenceDataSource`: the same ok or error code, the same version, the
/// same sections and items, after every command. Batches apply all or nothing.
@Suite("Model-based: random mutations agree with a plain reference")
struct ModelBasedTests {
    static let sectionIDs = ["s0", "s1", "s2", "s3", "s4"]
    static let itemIDs = (0..<10).map { "i\($0)" }

    @Test(arguments: 1...20)
    func randomCommandsMatchTheReference(seed: UInt64) throws {
        var random = ModelRandom(seed: seed)
        let connection = try Connection()
        var reference = ReferenceDataSource()
        for step in 0..<300 {
            let command = Self.command(&random, version: reference.version)
            let line = command.line(dataSource: "m")
            let expected = reference.run(command)
            let reply = try connection.request(line)
            let context = "seed \(seed), step \(step): \(line)"
            let code = reply.value(atPath: "error.code")
            if let expected {
                #expect(reply["ok"] == false && code == .string(expected), "expected \(expected), got \(reply) — \(context)")
            } else {
                #expect(reply["ok"] == true && reply.value(atPath: "result.version") == .int(reference.version), "expected ok, got \(reply) — \(context)")
            }
            let served = connection.state.dataSources["m"]
            #expect((served != nil) == reference.exists, "\(context)")
            #expect(served.map { Self.sections(of: $0.snapshot) } ?? [] == reference.sections, "\(context)\n reference: \(reference.sections)")
            #expect(served.map(\.version) ?? 0 == reference.version, "\(context)")
            guard served.map({ Self.sections(of: $0.snapshot) }) ?? [] == reference.sections && served?.version ?? 0 == reference.version else {
                return  // one divergence is enough to debug; the rest would repeat it
            }
            if step % 25 == 24 { try Self.checkSnapshotQuery(connection, reference, context) }
        }
        #expect(try connection.finish())
    }

    /// The `snapshot` query over the wire shows the reference's sections and version.
    static func checkSnapshotQuery(_ connection: Connection, _ reference: ReferenceDataSource, _ context: String) throws {
        let reply = try connection.request(#"{"cmd":"snapshot","dataSource":"m"}"#)
        guard reference.exists else {
            #expect(reply.value(atPath: "error.code") == "data-source-not-found", "\(context)")
            return
        }
        #expect(reply.value(atPath: "result.version") == .int(reference.version), "\(context)")
        let expected: JSONValue = .array(
            reference.sections.map { .object(["id": .string($0.id), "items": .array($0.items.map(JSONValue.string))]) })
        #expect(reply.value(atPath: "result.sections") == expected, "\(context)")
    }

    static func sections(of snapshot: Snapshot) -> [ReferenceDataSource.Section] {
        snapshot.sectionIdentifiers.map { ReferenceDataSource.Section(id: $0, items: (try? snapshot.itemIdentifiers(inSection: $0)) ?? []) }
    }

    // MARK: Generation

    static func command(_ random: inout ModelRandom, version: Int) -> ModelCommand {
        let ifVersion: Int? = random.chance(10) ? version + (random.chance(50) ? 0 : random.int(in: -1...1)) : nil
        if random.chance(12) {
            return ModelCommand(operations: (0..<random.int(in: 0...4)).map { _ in operation(&random, inBatch: true) }, isBatch: true, ifVersion: ifVersion)
        }
        return ModelCommand(operations: [operation(&random, inBatch: false)], isBatch: false, ifVersion: ifVersion)
    }

    static func operation(_ random: inout ModelRandom, inBatch: Bool) -> ModelOperation {
        let sections = { (random: inout ModelRandom) in (0..<random.int(in: 0...3)).map { _ in random.element(sectionIDs) } }
        let items = { (random: inout ModelRandom) in (0..<random.int(in: 0...3)).map { _ in random.element(itemIDs) } }
        switch random.int(in: 0...(inBatch ? 18 : 19)) {
        case 0, 1: return .appendSections(sections(&random))
        case 2: return .insertSections(sections(&random), placement(&random, sectionIDs))
        case 3: return .deleteSections(sections(&random))
        case 4, 5: return .moveSection(random.element(sectionIDs), placement(&random, sectionIDs))
        case 6, 7, 8, 9: return .appendItems(items(&random), toSection: random.chance(70) ? random.element(sectionIDs) : nil)
        case 10, 11: return .insertItems(items(&random), placement(&random, itemIDs))
        case 12, 13: return .deleteItems(items(&random))
        case 14: return random.chance(30) ? .deleteAllItems : .deleteItems(items(&random))
        case 15, 16, 17, 18: return .moveItem(random.element(itemIDs), placement(&random, itemIDs))
        default:
            let new = (0..<random.int(in: 0...3)).map { _ in ReferenceDataSource.Section(id: random.element(sectionIDs), items: items(&random)) }
            return .apply(new)
        }
    }

    static func placement(_ random: inout ModelRandom, _ ids: [String]) -> ModelPlacement {
        switch random.int(in: 0...39) {
        case 0: return ModelPlacement()
        case 1: return ModelPlacement(before: random.element(ids), after: random.element(ids))
        case 2...20: return ModelPlacement(before: random.element(ids))
        default: return ModelPlacement(after: random.element(ids))
        }
    }
}

/// SplitMix64, seeded: each seed replays exactly (the same generator as TestSupport's, which this test
/// target does not depend on).
struct ModelRandom: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    mutating func int(in range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &self) }
    mutating func chance(_ percent: Int) -> Bool { int(in: 0...99) < percent }
    mutating func element<T>(_ elements: [T]) -> T { elements[int(in: 0...(elements.count - 1))] }
}
