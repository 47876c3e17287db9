import CardFormatting
import DiffableCore
import Testing

@Suite("The card plugin's content")
struct HomeCardTests {
    @Test(arguments: [
        // regDate of the seed's first consult: 2021-10-29 01:53:14 UTC, 10:53 in Seoul.
        (1_635_472_394_000, "yyyy.MM.dd HH:mm", 0, "2021.10.29 01:53"),
        (1_635_472_394_000, "yyyy.MM.dd HH:mm", 540, "2021.10.29 10:53"),
        (1_635_458_400_000, "yyyy-MM-dd", 540, "2021-10-29"),  // 22:00 UTC the day before
        (1_635_458_400_000, "yyyy-MM-dd", 0, "2021-10-28"),
        (0, "yyyy/MM/dd HH:mm", 0, "1970/01/01 00:00"),
        (-1, "yyyy-MM-dd HH:mm", 0, "1969-12-31 23:59"),
        (951_782_400_000, "yyyy-MM-dd", 0, "2000-02-29"),  // a leap day in a century year
        (4_107_542_400_000, "yyyy-MM-dd", 0, "2100-03-01"),  // 2100 is not a leap year
    ])
    func datesFormat(milliseconds: Int, format: String, offset: Int, expected: String) {
        #expect(HomeCard.formatDate(milliseconds: milliseconds, format: format, utcOffsetMinutes: offset) == expected)
    }

    @Test func eachKindOfTheSeedsPayloads() throws {
        let company = try HomeCard.content(data: ["companyName": "닥프렌즈 병원", "addrRoad": "서울 특별시"], properties: [:], state: [:])
        #expect(company["kind"] == "company" && company["text"] == "닥프렌즈 병원" && company["secondaryText"] == "서울 특별시")
        let expert = try HomeCard.content(data: ["expertInfo": ["expertTypeName": "한의사", "name": "박지혜"]], properties: [:], state: ["selected": true])
        #expect(expert["kind"] == "expert" && expert["text"] == "박지혜" && expert["secondaryText"] == "한의사" && expert["selected"] == true)
        let consult = try HomeCard.content(
            data: ["title": "감기", "readCnt": 22, "regDate": 1_635_472_394_000], properties: ["utcOffsetMinutes": "540"], state: [:])
        #expect(consult["kind"] == "consult" && consult["readCount"] == 22 && consult["date"] == "2021.10.29")
        #expect(consult["secondaryText"] == "22 reads · 2021.10.29")
        #expect(throws: CardError.self) { try HomeCard.content(data: ["value": 1], properties: [:], state: [:]) }
        #expect(throws: CardError.self, "an unknown kind property") { try HomeCard.content(data: ["title": "x"], properties: ["kind": "poster"], state: [:]) }
    }
}
