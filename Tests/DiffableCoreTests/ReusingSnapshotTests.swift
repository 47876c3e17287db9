import DiffableCore
import TestSupport
import Testing

/// `Snapshot(_:reusing:)`, the fast path of `apply`, against the reference `Snapshot(_:)`.
@Suite("Snapshot built on another's slots")
struct ReusingSnapshotTests {
    /// The sections and items of `snapshot`, as `apply` receives them.
    static func contents(_ snapshot: Snapshot) throws -> [(section: Section, items: [Item])] {
        try snapshot.sections.map { ($0, try snapshot.items(inSection: $0.id)) }
    }

    /// 600 random pairs: the snapshot built on the old one equals the one built afresh, is sound, and
    /// diffs against the old one (and the old one against it) exactly as the fresh one does.
    @Test(arguments: 1...10)
    func sameSnapshotAndSameDiffAsTheReferencePath(batch: UInt64) throws {
        var generator = RandomSnapshots(seed: batch &* 104_729)
        for _ in 0..<60 {
            var old = try generator.snapshot(size: generator.size())
            // A snapshot that went through edits has free slots and reordered chunks to reuse.
            old = try generator.edit(old)
            old.clearMarks()
            var target = try generator.edit(old)
            target.clearMarks()
            let sections = try Self.contents(target)
            let reference = try Snapshot(sections)
            let reused = try Snapshot(sections, reusing: old)
            #expect(reused == reference)
            #expect(reused.invariantViolations() == [])
            #expect(old.invariantViolations() == [])
            #expect(reused.difference(from: old) == reference.difference(from: old))
            #expect(old.difference(from: reused) == old.difference(from: reference))
            #expect(reused.reloadedItemIdentifiers.isEmpty && reused.reconfiguredItemIdentifiers.isEmpty)
            // Built on again, and edited: still an ordinary snapshot.
            var again = try Snapshot(Self.contents(try generator.edit(reused)), reusing: reused)
            #expect(again.invariantViolations() == [])
            try again.appendSections([Section(generator.freshID("S"))])
            try again.appendItems([Item(generator.freshID("i"))])
            #expect(again.invariantViolations() == [])
        }
    }

    @Test func keptItemsKeepTheirPayloadFromTheNewContents() throws {
        let old = try Snapshot([(Section("S"), [Item("a", data: 1), Item("b", data: 2), Item("c")])])
        let new = try Snapshot([(Section("S"), [Item("c", data: "x"), Item("d"), Item("a", data: 1)])], reusing: old)
        #expect(new.itemIdentifiers == ["c", "d", "a"])
        #expect(new.data(ofItem: "c") == "x")
        #expect(new.data(ofItem: "a") == 1)
        #expect(new.contains(item: "b") == false)
        #expect(old.itemIdentifiers == ["a", "b", "c"] && old.data(ofItem: "c") == .null)
    }

    @Test func errorsAreTheReferencePathsErrors() throws {
        let old = try Snapshot([(Section("S"), [Item("a"), Item("b")]), (Section("T"), [Item("c")])])
        let cases: [[(section: Section, items: [Item])]] = [
            [(Section("S"), [Item("a"), Item("b"), Item("a")])],
            [(Section("S"), [Item("x")]), (Section("T"), [Item("x"), Item("c"), Item("c")])],
            [(Section("S"), []), (Section("S"), [])],
        ]
        for sections in cases {
            var expected: SnapshotError?
            do { _ = try Snapshot(sections) } catch let error as SnapshotError { expected = error }
            var got: SnapshotError?
            do { _ = try Snapshot(sections, reusing: old) } catch let error as SnapshotError { got = error }
            #expect(expected != nil)
            #expect(got?.code == expected?.code && got?.message == expected?.message && got?.identifiers == expected?.identifiers)
        }
        #expect(old.invariantViolations() == [] && old.itemIdentifiers == ["a", "b", "c"])
    }

    /// Far fewer items, or a few kept among many: the same snapshot as the reference path.
    @Test func shrinkingAndGrowing() throws {
        let old = try Snapshot([(Section("S"), (0..<5_000).map { Item("i\($0)") })])
        for sections in [
            [(section: Section("S"), items: [Item("i7"), Item("n1")])],
            [(section: Section("S"), items: (0..<3_000).map { Item("i\($0)") })],
            [(section: Section("S"), items: (0..<3_000).map { Item("i\($0)") } + (0..<3_000).map { Item("n\($0)") })],
        ] {
            let new = try Snapshot(sections, reusing: old)
            #expect(new == (try Snapshot(sections)))
            #expect(new.invariantViolations() == [])
            #expect(new.difference(from: old) == (try Snapshot(sections)).difference(from: old))
        }
    }

    /// Mostly new items: built afresh, so the old snapshot's slots do not pile up.
    @Test func mostlyNewItemsBuildAfresh() throws {
        var old = try Snapshot([(Section("S"), (0..<5_000).map { Item("old-\($0)") })])
        for round in 0..<4 {
            let sections = [(section: Section("S"), items: (0..<5_000).map { Item("new-\(round)-\($0)") })]
            let new = try Snapshot(sections, reusing: old)
            #expect(new == (try Snapshot(sections)))
            #expect(new.invariantViolations() == [])
            old = new
        }
    }
}
