import CardFormatting
import DiffableCore
import Testing

/// Registration properties and payloads at the edges of `Int`: each bad one is an error for its cell,
/// never a trap in the plugin.
@Suite("The card plugin's properties")
struct CardPropertyTests {
    let consult: JSONValue = ["title": "감기", "readCnt": 22, "regDate": 1_635_472_394_000]

    @Test(arguments: [
        JSONValue.int(1 << 62), .int(Int.max), .int(Int.min), .int(1_441), .int(-1_441), .string("4611686018427387904"),
        .string("99999999999999999999"), .string("nine"), .double(0.5), .double(1e300), .bool(true), ["540"],
    ])
    func aBadOffsetIsAnErrorForTheCell(offset: JSONValue) {
        #expect(throws: CardError.self) { try HomeCard.content(data: consult, properties: ["utcOffsetMinutes": offset], state: [:]) }
    }

    @Test(arguments: [
        (JSONValue.int(1_440), "2021.10.30"), (.int(-1_440), "2021.10.28"), (.string("540"), "2021.10.29"), (.double(60), "2021.10.29"),
        (.null, "2021.10.29"),
    ])
    func offsetsWithinADayWork(offset: JSONValue, date: String) throws {
        let content = try HomeCard.content(data: consult, properties: ["utcOffsetMinutes": offset], state: [:])
        #expect(content["date"] == .string(date))
    }

    @Test func otherBadPropertiesAreErrorsToo() {
        #expect(throws: CardError.self) { try HomeCard.content(data: consult, properties: ["dateFormat": 7], state: [:]) }
        #expect(throws: CardError.self) {
            try HomeCard.content(data: consult, properties: ["dateFormat": .string(String(repeating: "yyyy", count: 100))], state: [:])
        }
        #expect(throws: CardError.self) { try HomeCard.content(data: consult, properties: ["kind": 3], state: [:]) }
        // Checked even for a kind that shows no date.
        #expect(throws: CardError.self) {
            try HomeCard.content(data: ["companyName": "x"], properties: ["utcOffsetMinutes": .int(1 << 62)], state: [:])
        }
    }

    @Test(arguments: [Int.max, Int.min, Int.max - 999, Int.min + 1])
    func extremeInstantsNeverTrap(milliseconds: Int) throws {
        for offset in [-1_440, 0, 1_440] {
            let date = HomeCard.formatDate(milliseconds: milliseconds, format: "yyyy-MM-dd HH:mm", utcOffsetMinutes: offset)
            #expect(date != nil && date!.contains("-"), "\(milliseconds) at \(offset): \(String(describing: date))")
        }
        // A payload's regDate at the edge still gives a card.
        let content = try HomeCard.content(data: ["title": "t", "regDate": .int(milliseconds)], properties: ["utcOffsetMinutes": 1_440], state: [:])
        #expect(content["date"] != nil)
    }

    @Test func offsetsBeyondIntStepsAreNil() {
        #expect(HomeCard.formatDate(milliseconds: 0, format: "yyyy", utcOffsetMinutes: 1 << 62) == nil)
        #expect(HomeCard.formatDate(milliseconds: 0, format: "yyyy", utcOffsetMinutes: Int.min) == nil)
        #expect(HomeCard.formatDate(milliseconds: Int.max, format: "yyyy", utcOffsetMinutes: Int.max / 60) == nil)
    }
}
